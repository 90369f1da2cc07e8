import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** Prometheus metrics of one app instance (its own registry: no process-wide state). */
export class Metrics {
  readonly registry = new Registry();
  readonly operations = new Counter({
    name: "cairn_operations_total",
    help: "Contract operations handled, by operation, transport and outcome (a Problem code, or ok).",
    labelNames: ["operation", "transport", "outcome"] as const,
    registers: [this.registry],
  });
  readonly operationSeconds = new Histogram({
    name: "cairn_operation_duration_seconds",
    help: "Time to handle a contract operation, by operation and transport.",
    labelNames: ["operation", "transport"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly httpRequests = new Counter({
    name: "cairn_http_requests_total",
    help: "HTTP requests, by route and status.",
    labelNames: ["route", "status"] as const,
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: "cairn_" });
  }
}
