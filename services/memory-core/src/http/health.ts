import type { Contract } from "@cairn/openapi";
import { Router } from "express";
import type { TokenRegistry } from "../auth/tokens.js";
import { forbidden, RETRY_AFTER_SECONDS } from "../errors.js";
import type { Metrics } from "../metrics.js";
import { authenticate } from "./authenticate.js";

export interface Readiness {
  ready: boolean;
  checks: Record<string, "ok" | "failing">;
}

export function healthRouter(contract: Contract, metrics: Metrics, tokens: TokenRegistry, readiness: () => Promise<Readiness>): Router {
  const router = Router();
  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  router.get("/readyz", async (_req, res) => {
    const report = await readiness();
    if (!report.ready) res.setHeader("Retry-After", String(RETRY_AFTER_SECONDS));
    res.status(report.ready ? 200 : 503).json({ status: report.ready ? "ready" : "not_ready", checks: report.checks });
  });
  // Operational detail is for operators: Prometheus scrapes with an admin bearer token, and is shown the process's
  // series and its own workspace's (Metrics.scrape); one scrape job per workspace covers a multi-workspace server.
  router.get("/metrics", async (req, res) => {
    const principal = authenticate(req, tokens);
    if (principal.role !== "admin") throw forbidden("/metrics needs an admin token.");
    res.type(metrics.registry.contentType).send(await metrics.scrape(principal.workspace));
  });
  router.get("/openapi.json", (_req, res) => {
    res.json(contract.document);
  });
  return router;
}
