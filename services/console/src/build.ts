import { build } from "esbuild";
import { fileURLToPath } from "node:url";

/** One file of the console, as memory-core serves it under /console/. */
export interface ConsoleAsset {
  body: string;
  contentType: string;
}

/** The console's files by name under /console/: `index.html`, `app.js`, `app.css`. */
export type ConsoleAssets = ReadonlyMap<string, ConsoleAsset>;

const ENTRY = fileURLToPath(new URL("./ui/main.tsx", import.meta.url));
const STYLES = fileURLToPath(new URL("./ui/styles.css", import.meta.url));

const INDEX = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Cairn console</title>
    <link rel="stylesheet" href="/console/app.css" />
  </head>
  <body>
    <div id="app"></div>
    <script type="module" src="/console/app.js"></script>
  </body>
</html>
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
  ]);
}
