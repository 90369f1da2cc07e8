import type { Embedder } from "../embeddings/embedder.js";
import { internal } from "../errors.js";
import { EMBEDDED_COLLECTIONS, sameStamp, type ChromaStore } from "../store/chroma-store.js";
import type { ReembedProgress } from "./types.js";

/**
 * Moves a workspace to the server's embedding model after a model change, one bounded batch per call.
 * A collection's vectors cannot change dimension in place, so each collection is copied, newly embedded,
 * into a staging collection (see ChromaStore.staging) and swapped in when complete. Records are copied in
 * Chroma's stored order, so the staging collection's size is the checkpoint: a run cut short resumes there.
 * Nothing writes to a collection with a foreign stamp meanwhile (every operation refuses it), so the order
 * holds still.
 */
export class Reembedding {
  constructor(
    private readonly store: ChromaStore,
    private readonly embedder: Embedder,
  ) {}

  async step(workspace: string, limit: number): Promise<ReembedProgress> {
    const collections: ReembedProgress["collections"] = [];
    let processed = 0;
    for (const name of EMBEDDED_COLLECTIONS) {
      const source = await this.store.inspect(workspace, name);
      const total = source ? await source.records.count() : 0;
      if (!source || sameStamp(source.stamp, this.store.stamp)) {
        collections.push({ collection: name, state: "current", reembedded: total, total });
        continue;
      }
      const staging = await this.store.staging(workspace, name);
      let staged = await staging.count();
      if (processed < limit && staged < total) {
        const page = await source.records.get({ offset: staged, limit: limit - processed, withDocuments: true });
        // The count and the listing disagree only if records vanished meanwhile: what is listed is all there is.
        if (page.length === 0) staged = total;
        const vectors = await this.embedder.embed(page.map((r) => r.document ?? ""));
        if (vectors.length !== page.length) throw internal();
        await staging.add(page.map((r, i) => ({ id: r.id, embedding: vectors[i]!, document: r.document ?? "", metadata: r.metadata })));
        staged += page.length;
        processed += page.length;
      }
      const complete = staged >= total;
      if (complete) await this.store.swapInStaging(workspace, name);
      collections.push({ collection: name, state: complete ? "current" : "reembedding", reembedded: Math.min(staged, total), total });
    }
    return {
      workspace,
      done: collections.every((c) => c.state === "current"),
      embedder: this.store.stamp,
      processed,
      collections,
    };
  }
}
