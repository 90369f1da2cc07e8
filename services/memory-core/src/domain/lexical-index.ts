import MiniSearch, { type SearchResult } from "minisearch";
import type { Metadata } from "../store/chroma-store.js";
import { terms, toTerm, tokenize } from "./text-analysis.js";

export interface LexicalHit {
  id: string;
  score: number;
  /** Share of the query's distinct terms that the record holds. */
  coverage: number;
}

export interface LexicalDocument {
  id: string;
  fields: Record<string, string>;
  metadata: Metadata;
}

/**
 * BM25 (MiniSearch's BM25+) over one collection of one workspace. It holds nothing that Chroma does not:
 * it is built from Chroma and kept current from the workspace's change feed (see lexical-catalog.ts).
 */
export class LexicalIndex {
  private readonly search: MiniSearch;
  private readonly metadata = new Map<string, Metadata>();

  constructor(boosts: Record<string, number>) {
    this.search = new MiniSearch({
      idField: "id",
      fields: Object.keys(boosts),
      tokenize,
      processTerm: toTerm,
      searchOptions: { boost: boosts, combineWith: "OR" },
    });
  }

  get size(): number {
    return this.metadata.size;
  }

  put(document: LexicalDocument): void {
    const entry = { id: document.id, ...document.fields };
    if (this.search.has(document.id)) this.search.replace(entry);
    else this.search.add(entry);
    this.metadata.set(document.id, document.metadata);
  }

  remove(id: string): void {
    if (this.search.has(id)) this.search.discard(id);
    this.metadata.delete(id);
  }

  query(text: string, limit: number, accept: (metadata: Metadata) => boolean): LexicalHit[] {
    const asked = terms(text).length;
    if (asked === 0) return [];
    const results: SearchResult[] = this.search.search(text, {
      filter: (result) => {
        const metadata = this.metadata.get(String(result.id));
        return metadata !== undefined && accept(metadata);
      },
    });
    return results.slice(0, limit).map((r) => ({
      id: String(r.id),
      score: r.score,
      coverage: Math.min(1, r.queryTerms.length / asked),
    }));
  }
}
