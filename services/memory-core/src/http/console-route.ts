import { Router } from "express";

/** Files a composition root hands memory-core to serve under /console/ (the console package builds them). */
export type ConsoleFiles = ReadonlyMap<string, { body: string; contentType: string }>;

/**
 * Only Cairn's own origin: no inline script or style, no other host, no frames, no plugins. Stored text is
 * rendered as text by the console; this is the second line should that ever slip.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "font-src 'none'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** The console at /console (its page) and /console/<file> (its script and styles), same origin as the API it calls. */
export function consoleRouter(files: ConsoleFiles): Router {
  const router = Router();
  router.get(["/console", "/console/", "/console/:file"], (req, res, next) => {
    const name = typeof req.params.file === "string" ? req.params.file : "index.html";
    const file = files.get(name);
    if (!file) {
      next();
      return;
    }
    res.setHeader("Content-Security-Policy", CONSOLE_CSP);
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Referrer-Policy", "no-referrer");
    res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
    // The page is small and names no version: always fresh, so a restarted server's console is the one shown.
    res.setHeader("Cache-Control", "no-cache");
    res.type(file.contentType).send(file.body);
  });
  return router;
}
