import { describe, expect, it } from "vitest";
import { GroupCommit } from "../src/ledger/group-commit.js";

/** An item of a test's writers: settled by the batch that commits it. */
interface Item {
  resolve(): void;
  reject(error: unknown): void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A group commit whose batches take `ioMs` each, and the sizes of the batches it committed, in order. */
function groupCommit(gatherMs: number, ioMs = 10) {
  const sizes: number[] = [];
  const commits = new GroupCommit<Item>(
    500,
    async (_key, batch) => {
      sizes.push(batch.length);
      await sleep(ioMs);
      for (const item of batch) item.resolve();
    },
    gatherMs,
  );
  const write = () => new Promise<void>((resolve, reject) => commits.add("workspace", [{ resolve, reject }]));
  return { sizes, write };
}

/**
 * Writers that each write `rounds` items one after another, coming back a round trip after each answer, as
 * clients over a network do; the first starts alone, the others while its batch is in flight.
 */
async function writeInRounds(write: () => Promise<void>, writers: number, rounds: number) {
  await Promise.all(
    Array.from({ length: writers }, async (_, writer) => {
      if (writer > 0) await sleep(2);
      for (let round = 0; round < rounds; round++) {
        if (round > 0) await sleep(1);
        await write();
      }
    }),
  );
}

describe("group commit", () => {
  it("gathers the writers a batch answered into the next batch, where they would otherwise split in two that alternate", async () => {
    const alternating = groupCommit(0);
    await writeInRounds(alternating.write, 4, 6);
    expect(alternating.sizes.slice(0, 6)).toEqual([1, 3, 1, 3, 1, 3]);

    const gathered = groupCommit(1000);
    await writeInRounds(gathered.write, 4, 6);
    // The three that queued behind the first batch wait for its writer to come back, and all go together since.
    expect(gathered.sizes).toEqual([1, 4, 4, 4, 4, 4, 3]);
  });

  it("never keeps a lone writer waiting, and sends what came once the wait is over when the others do not come back", async () => {
    // A lone writer's next item is all its batch wants: were it kept for the wait, this would take minutes.
    const lone = groupCommit(60_000);
    await writeInRounds(lone.write, 1, 5);
    expect(lone.sizes).toEqual([1, 1, 1, 1, 1]);

    const { sizes, write } = groupCommit(1000);
    await Promise.all([write(), sleep(2).then(() => Promise.all([write(), write()]))]);
    expect(sizes).toEqual([1, 2]);
    // Three were answered; one comes back, and its batch waits for the other two until the wait is over.
    let settled = false;
    const late = write().then(() => (settled = true));
    await sleep(50);
    expect(settled).toBe(false);
    expect(sizes).toEqual([1, 2]);
    await late;
    expect(sizes).toEqual([1, 2, 1]);
  });
});
