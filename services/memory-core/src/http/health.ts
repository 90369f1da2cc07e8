import type { Contract } from "@cairn/openapi";
import { Router } from "express";
import type { Metrics } from "../metrics.js";

export interface Readiness {
  ready: boolean;
  checks: Record<string, "ok" | "failing">;
}

export function healthRouter(contract: Contract, metrics: Metrics, readiness: () => Promise<Readiness>): Router {
  const router = Router();
  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  router.get("/readyz", async (_req, res) => {
    const report = await readiness();
    res.status(report.ready ? 200 : 503).json({ status: report.ready ? "ready" : "not_ready", checks: report.checks });
  });
  router.get("/metrics", async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  router.get("/openapi.json", (_req, res) => {
    res.json(contract.document);
  });
  return router;
}
