import { createServer, type RequestListener, type Server } from "node:http";
import { ConfigError, type HttpServerSettings } from "../config.js";
import type { Logger } from "../logger.js";

/** At most one log line a minute about connections closed at the cap, however many there are. */
const DROP_LOG_INTERVAL_MS = 60_000;

/**
 * The keep-alive time the server announces (`Keep-Alive: timeout=`, in whole seconds): at most half the time it
 * holds an idle connection, and never above 5 s. See `createHttpServer`.
 */
export function advertisedKeepAliveSeconds(settings: HttpServerSettings): number {
  return Math.min(5, Math.floor(settings.keepAliveTimeoutMs / 2000));
}

/**
 * The HTTP server memory-core listens with: Node's server with the connection limits of `settings` (config.ts).
 *
 * - A request must arrive whole in time: headers within `headersTimeoutMs`, headers and body within
 *   `requestTimeoutMs`, else Node answers 408 and closes the connection. Node looks for such connections every
 *   `connectionsCheckingInterval`, set here to a fraction of the headers' timeout so that it holds to within it.
 *   An idle keep-alive connection is not a request in progress: these timeouts do not close it.
 * - At most `maxConnections` connections are open; one more is closed as it is accepted, and the log says so (the
 *   first time, then at most once a minute with the count since).
 * - An idle keep-alive connection is held for `keepAliveTimeoutMs` but announced to clients as kept for much less
 *   (`advertisedKeepAliveSeconds`). fetch (undici, the MCP SDK's HTTP transport) reuses an idle connection until
 *   2 s before the announced time; a client held up past the moment the server closes it (its event loop busy,
 *   a pause of its collector, a machine short of CPU) writes its next request onto a closing connection, and a
 *   server busy past that moment with such a request already sent closes the connection (its timers run) before
 *   it reads the request. The request meets a reset and fetch fails (`fetch failed`), which it does not retry
 *   for a POST. Announcing a few seconds and
 *   holding for over a minute leaves such a client a minute's delay before the race could happen; reverse
 *   proxies, which keep their own idle time (60 s by default for the usual ones), stay under the hold too.
 */
export function createHttpServer(app: RequestListener, settings: HttpServerSettings, log: Logger): Server {
  const keepAlive = `timeout=${advertisedKeepAliveSeconds(settings)}`;
  const server = createServer(
    {
      headersTimeout: settings.headersTimeoutMs,
      requestTimeout: settings.requestTimeoutMs,
      connectionsCheckingInterval: Math.max(1, Math.min(1000, Math.floor(settings.headersTimeoutMs / 4))),
    },
    (req, res) => {
      // Set by hand, Node leaves out the one it writes from keepAliveTimeout (and still decides keep-alive or close).
      res.setHeader("Keep-Alive", keepAlive);
      app(req, res);
    },
  );
  server.keepAliveTimeout = settings.keepAliveTimeoutMs;
  server.maxConnections = settings.maxConnections;
  let dropped = 0;
  let loggedAt: number | undefined;
  server.on("drop", () => {
    dropped++;
    const now = Date.now();
    if (loggedAt !== undefined && now - loggedAt < DROP_LOG_INTERVAL_MS) return;
    log.warn("connections closed as accepted: the server holds as many as CAIRN_HTTP_MAX_CONNECTIONS allows", {
      max_connections: settings.maxConnections,
      closed: dropped,
    });
    dropped = 0;
    loggedAt = now;
  });
  return server;
}

/** Listens on `host:port`; a port in use or an address that cannot be bound is a ConfigError naming the variable. */
export function listen(server: Server, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.listen(port, host);
    server.once("listening", () => resolve(server));
    server.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE") reject(new ConfigError("CAIRN_PORT", `port ${port} is already in use`));
      else if (error.code === "EADDRNOTAVAIL") reject(new ConfigError("CAIRN_HOST", `cannot bind ${host}`));
      else reject(error);
    });
  });
}

/** Stops accepting, and closes every connection, idle or not. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
