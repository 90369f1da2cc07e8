#!/usr/bin/env node
// Container healthcheck for the Cairn image, which has node but no curl:
//   node deploy/healthcheck.mjs http <url>        healthy when the URL answers 2xx within the timeout
//   node deploy/healthcheck.mjs process <word>    healthy while a process whose command line has <word> runs
// Exit 0 healthy, 1 unhealthy, 2 misused; one line on stderr says why.
import { readdirSync, readFileSync } from "node:fs";

const TIMEOUT_MS = 4_000;

async function httpHealthy(url) {
  const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
}

function processHealthy(word) {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let commandLine;
    try {
      commandLine = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ");
    } catch {
      continue; // the process ended while we looked
    }
    if (commandLine.includes(word)) return;
  }
  throw new Error(`no process with "${word}" in its command line`);
}

const [mode, target] = process.argv.slice(2);
if (!target || (mode !== "http" && mode !== "process")) {
  process.stderr.write("usage: healthcheck.mjs http <url> | process <word>\n");
  process.exit(2);
}
try {
  if (mode === "http") await httpHealthy(target);
  else processHealthy(target);
} catch (error) {
  process.stderr.write(`unhealthy: ${error.message}\n`);
  process.exit(1);
}
