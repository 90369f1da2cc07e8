import { build } from "esbuild";
import { fileURLToPath } from "node:url";

/** One file of the console, as memory-core serves it under /console/. */
export interface ConsoleAsset {
  body: string;
  contentType: string;
}

/** The console's files by name under /console/: `index.html`, `app.js`, `app.css`, `favicon.svg`. */
export type ConsoleAssets = ReadonlyMap<string, ConsoleAsset>;

const ENTRY = fileURLToPath(new URL("./ui/main.tsx", import.meta.url));
const STYLES = fileURLToPath(new URL("./ui/styles.css", import.meta.url));

const INDEX = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Cairn console</title>
    <link rel="icon" href="/console/favicon.svg" type="image/svg+xml" />
    <link rel="stylesheet" href="/console/app.css" />
  </head>
  <body>
    <div id="app"></div>
    <script type="module" src="/console/app.js"></script>
  </body>
</html>
`;

/**
 * The console's icon: three stones, a cairn. The page names it, so a browser asks for it here (same origin, as the
 * Content-Security-Policy's `img-src 'self'` allows) instead of for a /favicon.ico that nothing serves.
 */
const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<ellipse cx="16" cy="26" rx="12" ry="5" fill="#6b7280"/>
<ellipse cx="16" cy="17" rx="8.5" ry="4.5" fill="#9ca3af"/>
<ellipse cx="16" cy="9" rx="5" ry="3.5" fill="#4b5563"/>
</svg>
`;

/**
 * Bundles the console (Preact, the contract's REST binding, the pages) in memory when the server starts, so
 * `npm start` and the image serve it with no build command of their own; nothing is fetched from elsewhere.
 */
export async function buildConsole(): Promise<ConsoleAssets> {
  const result = await build({
    entryPoints: { app: ENTRY, styles: STYLES },
    bundle: true,
    format: "esm",
    target: "es2022",
    minify: true,
    jsx: "automatic",
    jsxImportSource: "preact",
    outdir: "out",
    write: false,
    logLevel: "silent",
    legalComments: "none",
  });
  const output = (name: string) => {
    const file = result.outputFiles.find((f) => f.path.endsWith(`/${name}`));
    if (!file) throw new Error(`the console's build made no ${name}`);
    return file.text;
  };
  return new Map([
    ["index.html", { body: INDEX, contentType: "text/html; charset=utf-8" }],
    ["app.js", { body: output("app.js"), contentType: "text/javascript; charset=utf-8" }],
    ["app.css", { body: output("styles.css"), contentType: "text/css; charset=utf-8" }],
    ["favicon.svg", { body: FAVICON, contentType: "image/svg+xml" }],
  ]);
}
