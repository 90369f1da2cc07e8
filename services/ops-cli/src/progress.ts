/**
 * A progress bar on stderr. On a terminal it redraws one line; elsewhere (logs, CI, pipes) it prints a line
 * at each tenth of the way, so a log shows progress without thousands of lines.
 */
export class ProgressBar {
  private done = 0;
  private lastTenth = -1;
  private drawn = false;

  constructor(
    private readonly out: { write(text: string): unknown; isTTY?: boolean; columns?: number },
    private readonly label: string,
    private total: number,
  ) {}

  setTotal(total: number) {
    this.total = total;
  }

  /** Sets how much is done (not an increment: resuming starts part of the way). */
  update(done: number, note = "") {
    this.done = done;
    const share = this.total > 0 ? Math.min(1, done / this.total) : 1;
    if (this.out.isTTY) {
      const width = Math.max(10, Math.min(40, (this.out.columns ?? 80) - 50));
      const filled = Math.round(share * width);
      this.out.write(
        `\r${this.label} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${percent(share)} ${done}/${this.total}${note ? ` ${note}` : ""}\x1b[K`,
      );
      this.drawn = true;
      return;
    }
    const tenth = Math.floor(share * 10);
    if (tenth > this.lastTenth) {
      this.lastTenth = tenth;
      this.out.write(`${this.label}: ${percent(share)} (${done}/${this.total})${note ? ` ${note}` : ""}\n`);
    }
  }

  finish(note = "") {
    if (this.out.isTTY) {
      if (!this.drawn) this.update(this.done, note);
      this.out.write("\n");
    } else if (this.lastTenth < 10) {
      this.update(this.total, note);
    }
  }
}

const percent = (share: number) => `${Math.floor(share * 100)}%`.padStart(4);
