import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

/**
 * Debian's Chromium (`apt-get install chromium`, which .ci/run does), driven by playwright-core: Playwright's own
 * browser download cannot reach its servers from these machines. CAIRN_CHROMIUM names another binary.
 */
export function chromiumPath(): string {
  const path = process.env.CAIRN_CHROMIUM ?? "/usr/bin/chromium";
  if (!existsSync(path))
    throw new Error(`no Chromium at ${path}: install Debian's chromium package (apt-get install chromium) or set CAIRN_CHROMIUM`);
  return path;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: ["--no-sandbox", "--disable-dev-shm-usage"] });
}
