import { getHeapStatistics } from "node:v8";
import { parentPort } from "node:worker_threads";
import { Ranking } from "./ranking.js";
import type { RankingReply, RankingRequest } from "./ranking-host.js";
import { snapshotLines } from "./snapshot.js";

/**
 * The lexical rankings of one memory-core process, on a thread of their own (see ranking-host.ts): requests
 * come in batches, in the order they were made, and each query is answered before the next request is read.
 */
const rankings = new Map<number, Ranking>();

function handle(request: RankingRequest): RankingReply | undefined {
  switch (request.type) {
    case "create":
      rankings.set(request.ranking, new Ranking(request.options));
      return undefined;
    case "drop":
      rankings.delete(request.ranking);
      return undefined;
    case "put": {
      const ranking = rankings.get(request.ranking);
      for (const document of request.documents) ranking?.put(document);
      return undefined;
    }
    case "remove":
      rankings.get(request.ranking)?.remove(request.id);
      return undefined;
    case "query": {
      const ranking = rankings.get(request.ranking);
      if (!ranking) return { call: request.call, failure: "no such ranking" };
      return { call: request.call, hits: ranking.query(request.query) };
    }
    case "dump": {
      const ranking = rankings.get(request.ranking);
      if (!ranking) return { call: request.call, failure: "no such ranking" };
      const { documents, next } = ranking.dump(request.from, request.limit);
      return { call: request.call, dump: { lines: snapshotLines(documents), records: documents.length, next } };
    }
    case "stats":
      return { call: request.call, stats: rankings.get(request.ranking)?.stats() };
    case "prepare":
      rankings.get(request.ranking)?.prepare();
      return { call: request.call, prepared: true };
    case "heap":
      return { call: request.call, heapUsedBytes: getHeapStatistics().used_heap_size };
  }
}

parentPort!.on("message", (batch: RankingRequest[]) => {
  for (const request of batch) {
    let reply: RankingReply | undefined;
    try {
      reply = handle(request);
    } catch (error) {
      // Answered to the query that failed; a failed put or remove breaks every later answer, so it ends the thread.
      if (!("call" in request)) throw error;
      reply = { call: request.call, failure: error instanceof Error ? error.message : String(error) };
    }
    // A snapshot's lines are handed over, not copied.
    if (reply) parentPort!.postMessage(reply, "dump" in reply ? [reply.dump.lines.buffer as ArrayBuffer] : []);
  }
});
