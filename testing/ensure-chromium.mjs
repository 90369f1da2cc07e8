// Runs before `npm test` (npm's pretest): the console's browser tests drive Debian's Chromium through
// playwright-core. On a fresh Debian machine it is installed here, so the README's test command stays one command.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const path = process.env.CAIRN_CHROMIUM ?? "/usr/bin/chromium";
if (!existsSync(path)) {
  const root = process.getuid?.() === 0;
  const apt = (...args) =>
    execFileSync(root ? "apt-get" : "sudo", root ? args : ["apt-get", ...args], {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  process.stderr.write(`cairn: the console's browser tests need Chromium; installing Debian's chromium package\n`);
  try {
    apt("update", "-qq");
    apt("install", "-y", "-qq", "--no-install-recommends", "chromium");
  } catch {
    process.stderr.write(
      "cairn: could not install chromium: run `apt-get install chromium` (or set CAIRN_CHROMIUM to a Chromium binary)\n",
    );
    process.exit(1);
  }
}
