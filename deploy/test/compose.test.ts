import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import yaml from "js-yaml";
import { describe, expect, inject, it } from "vitest";
import { cairnVariablesIn, composeViolations, parseEnvFile, type ComposeInputs } from "./support/compose-rules.js";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const read = (path: string) => readFileSync(join(repo, path), "utf8");

function knownVariables(): Set<string> {
  const names = new Set<string>();
  for (const service of readdirSync(join(repo, "services"))) {
    let source: string;
    try {
      source = read(`services/${service}/src/config.ts`);
    } catch {
      continue; // a workspace without a config.ts reads no environment
    }
    cairnVariablesIn(source).forEach((name) => names.add(name));
  }
  return names;
}

function realInputs(): ComposeInputs {
  return {
    compose: yaml.load(read("docker-compose.yml")),
    envFiles: {
      default: parseEnvFile(read("profiles/default.env")),
      "local-model": parseEnvFile(read("profiles/local-model.env")),
      "scale-out": parseEnvFile(read("profiles/scale-out.env")),
    },
    knownVariables: knownVariables(),
    caddyfile: read("deploy/Caddyfile"),
  };
}

type Dict = Record<string, any>;

/** The real inputs with one thing broken, and the violation that must name it. */
function broken(change: (compose: Dict, env: ComposeInputs["envFiles"]) => void, caddyfile?: (text: string) => string): string[] {
  const inputs = realInputs();
  change(inputs.compose as Dict, inputs.envFiles);
  if (caddyfile) inputs.caddyfile = caddyfile(inputs.caddyfile);
  return composeViolations(inputs);
}

describe("docker-compose.yml and the profile env files", () => {
  it("keep every rule", () => {
    const inputs = realInputs();
    expect(composeViolations(inputs)).toEqual([]);
    // The names the rules were checked against are real: memory-core's config.ts reads these.
    expect(inputs.knownVariables).toContain("CAIRN_CHROMA_URL");
    expect(inputs.knownVariables).toContain("CAIRN_EMBEDDINGS_BASE_URL");
  });

  it("run Chroma 1.0.0, the server line of the chromadb client the services use", () => {
    const compose = realInputs().compose as Dict;
    expect(compose.services.chroma.image).toBe("chromadb/chroma:1.0.0");
    const lock = JSON.parse(read("package-lock.json")) as Dict;
    expect(lock.packages["node_modules/chromadb"].version).toBe("3.5.0");
    expect(lock.packages["node_modules/chromadb-js-bindings-linux-x64-gnu"].version).toBe("1.0.5");
  });

  it("let memory-core reach Chroma by its service name and take tokens from the secret", () => {
    const env = (realInputs().compose as Dict).services["memory-core"].environment;
    expect(env.CAIRN_CHROMA_URL).toBe("http://chroma:8000");
    expect(env.CAIRN_TOKENS_FILE).toBe("/run/secrets/cairn_tokens");
  });

  it("point the local-model profile's embeddings and summaries at Ollama's OpenAI-compatible API", () => {
    const local = realInputs().envFiles["local-model"]!;
    const defaults = realInputs().envFiles.default!;
    expect(local).toMatchObject({
      CAIRN_EMBEDDINGS: "openai",
      CAIRN_EMBEDDINGS_BASE_URL: "http://ollama:11434/v1",
      CAIRN_CHAT_BASE_URL: "http://ollama:11434/v1",
    });
    expect(defaults).toMatchObject({ CAIRN_EMBEDDINGS: "local", CAIRN_CHAT_BASE_URL: "" });
  });
});

describe("Chroma's compose healthcheck", () => {
  const run = promisify(execFile);
  /** The healthcheck's command as the container would run it: `$$` unescaped, aimed at `port`. */
  async function healthcheckExitCode(port: number): Promise<number> {
    const test = (realInputs().compose as Dict).services.chroma.healthcheck.test as string[];
    expect(test[0]).toBe("CMD");
    const [command, ...args] = test.slice(1).map((part) => part.replaceAll("$$", "$").replace("/8000", `/${port}`));
    try {
      await run(command!, args);
      return 0;
    } catch (error) {
      return (error as { code: number }).code;
    }
  }

  it("passes against a running Chroma 1.0 server and fails where none answers", async () => {
    // The test setup's Chroma is the same 1.0.0 server line as the chromadb/chroma:1.0.0 image.
    const chroma = new URL(inject("chromaUrl"));
    expect(await healthcheckExitCode(Number(chroma.port))).toBe(0);
    const closedPort = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    expect(await healthcheckExitCode(closedPort)).not.toBe(0);
  });
});

describe("the compose rules catch", () => {
  it("an unpinned image", () => {
    expect(broken((c) => (c.services.chroma.image = "chromadb/chroma:latest"))).toContain(
      "chroma: image chromadb/chroma:latest is not pinned to a version",
    );
    expect(broken((c) => (c.services.ollama.image = "ollama/ollama"))).toContain("ollama: image ollama/ollama is not pinned to a version");
  });

  it("a long-running service without a healthcheck, and Chroma's that skips the heartbeat", () => {
    expect(broken((c) => delete c.services.summarizer.healthcheck)).toContain("summarizer: no healthcheck");
    expect(broken((c) => (c.services.chroma.healthcheck.test = ["CMD", "true"]))).toContain(
      "chroma: the healthcheck does not ask its heartbeat (/api/v2/heartbeat)",
    );
  });

  it("a missing memory limit or restart policy", () => {
    expect(broken((c) => delete c.services["memory-core"].mem_limit)).toContain("memory-core: no memory limit (mem_limit)");
    expect(broken((c) => delete c.services.chroma.restart)).toContain("chroma: no restart policy");
  });

  it("Chroma's data off a named volume, and bind mounts", () => {
    expect(broken((c) => (c.services.chroma.volumes = ["./chroma:/data"]))).toEqual(
      expect.arrayContaining([
        "chroma: bind-mounts ./chroma; data goes on named volumes",
        "chroma: its data (/data) is not on a named volume",
      ]),
    );
    expect(broken((c) => delete c.volumes["chroma-data"])).toContain("chroma: volume chroma-data is not declared");
  });

  it("a second published service, and memory-core published beyond loopback", () => {
    expect(broken((c) => (c.services.chroma.ports = ["127.0.0.1:8000:8000"]))).toContain(
      "chroma: publishes ports; only memory-core and the scale-out proxy may",
    );
    expect(broken((c) => (c.services["memory-core"].ports = ["8790:8790"]))).toContain(
      "memory-core: port 8790:8790 is not bound to 127.0.0.1 by default",
    );
    expect(broken((_, env) => (env.default!.MEMORY_CORE_BIND = "0.0.0.0"))).toContain(
      "memory-core: port ${MEMORY_CORE_BIND:-127.0.0.1}:${MEMORY_CORE_PORT:-8790}:8790 is not bound to 127.0.0.1 by default",
    );
  });

  it("Chroma on a network that is not internal", () => {
    expect(broken((c) => (c.services.chroma.networks = ["backend", "edge"]))).toContain("chroma: on network edge, which is not internal");
    expect(broken((c) => (c.networks.backend.internal = false))).toContain("chroma: on network backend, which is not internal");
  });

  it("memory-core starting before Chroma is healthy", () => {
    expect(broken((c) => (c.services["memory-core"].depends_on = ["chroma"]))).toContain("memory-core: does not wait for a healthy chroma");
  });

  it("tokens outside a secret, and keys written into the file", () => {
    expect(broken((c) => (c.services["memory-core"].environment.CAIRN_TOKENS_FILE = "/var/lib/cairn/tokens.yaml"))).toContain(
      "memory-core: CAIRN_TOKENS_FILE is not a compose secret it mounts",
    );
    expect(broken((c) => (c.services.summarizer.environment.CAIRN_CHAT_API_KEY = "sk-live-123"))).toContain(
      "summarizer: CAIRN_CHAT_API_KEY is written into the compose file; take it from the environment",
    );
  });

  it("a CAIRN_* variable that no config.ts reads, in compose or in a profile file", () => {
    expect(broken((c) => (c.services["memory-core"].environment.CAIRN_EMBEDING_MODEL = "x"))).toContain(
      "CAIRN_EMBEDING_MODEL: no service's config.ts reads it",
    );
    expect(broken((_, env) => (env["local-model"]!.CAIRN_CHAT_TEMPERATURE = "0.2"))).toContain(
      "CAIRN_CHAT_TEMPERATURE: no service's config.ts reads it",
    );
  });

  it("profile files out of step with the compose file", () => {
    expect(broken((_, env) => delete env.default!.CHROMA_MEM_LIMIT)).toContain(
      "CHROMA_MEM_LIMIT: used in docker-compose.yml but not listed in profiles/default.env",
    );
    expect(broken((_, env) => (env.default!.CAIRN_SUMMARY_IDLE_MS = "60000"))).toContain(
      'CAIRN_SUMMARY_IDLE_MS: docker-compose.yml falls back to "900000", profiles/default.env says "60000"',
    );
    expect(broken((_, env) => delete env["local-model"]!.OLLAMA_MEM_LIMIT)).toContain(
      "profiles/local-model.env does not set OLLAMA_MEM_LIMIT",
    );
  });

  it("a local-model profile that does not use its model server", () => {
    expect(broken((_, env) => (env["local-model"]!.CAIRN_EMBEDDINGS_BASE_URL = "http://chroma:8000/v1"))).toContain(
      "profiles/local-model.env: CAIRN_EMBEDDINGS_BASE_URL does not point at the profile's model server",
    );
    expect(broken((_, env) => (env["local-model"]!.CAIRN_EMBEDDINGS = "local"))).toContain(
      "profiles/local-model.env does not take embeddings from the model server",
    );
    expect(broken((c) => delete c.services.ollama.profiles)).toContain(
      "ollama: an extra service must belong to one profile, local-model or scale-out",
    );
  });

  it("lexical snapshots off, in the tmpfs data dir, or on a volume another replica writes too", () => {
    expect(broken((c) => (c.services["memory-core"].environment.CAIRN_INDEX_DIR = "off"))).toContain(
      "memory-core: keeps no lexical snapshots (CAIRN_INDEX_DIR); a restart reads every record from Chroma",
    );
    expect(broken((c) => delete c.services["memory-core-2"].volumes)).toContain(
      "memory-core-2: CAIRN_INDEX_DIR (/var/lib/cairn/lexical) is not on a named volume",
    );
    expect(broken((c) => (c.services["memory-core-3"].volumes = ["memory-core-index:/var/lib/cairn/lexical"]))).toEqual([
      "memory-core-3: shares the snapshot volume memory-core-index with memory-core",
    ]);
  });

  it("a scale-out replica that is not memory-core again, or is published", () => {
    expect(
      broken((c) => (c.services["memory-core-2"].environment = { ...c.services["memory-core-2"].environment, CAIRN_PORT: "9000" })),
    ).toContain("memory-core-2: its environment differs from memory-core's");
    expect(broken((c) => (c.services["memory-core-3"].mem_limit = "512m"))).toContain(
      "memory-core-3: its mem_limit differs from memory-core's",
    );
    expect(broken((c) => (c.services["memory-core-2"].ports = ["127.0.0.1:8791:8790"]))).toContain(
      "memory-core-2: publishes ports; replicas are reached through the proxy",
    );
    expect(broken((c) => delete c.services["memory-core-3"])).toEqual(
      expect.arrayContaining(["scale-out: fewer than two memory-core replicas besides memory-core"]),
    );
    expect(broken((c) => delete c.services["memory-core-2"].depends_on)).toContain("memory-core-2: does not wait for a healthy chroma");
  });

  it("a proxy not pinned by digest, published beyond loopback, unchecked, or unable to start", () => {
    expect(broken((c) => (c.services.proxy.image = "caddy:2.10.2-alpine"))).toContain(
      "proxy: image caddy:2.10.2-alpine is not Caddy pinned by version and digest",
    );
    expect(broken((_, env) => (env.default!.PROXY_BIND = "0.0.0.0"))).toContain(
      "proxy: port ${PROXY_BIND:-127.0.0.1}:${PROXY_PORT:-8780}:8080 is not bound to 127.0.0.1 by default",
    );
    expect(broken((c) => (c.services.proxy.healthcheck.test = ["CMD", "true"]))).toContain(
      "proxy: the healthcheck does not ask /readyz through the proxy",
    );
    expect(broken((c) => delete c.services.proxy.cap_add)).toContain(
      "proxy: drops ALL capabilities without adding NET_BIND_SERVICE back (caddy's exec fails)",
    );
    expect(broken((c) => (c.services.proxy.volumes = ["./deploy/Caddyfile:/etc/caddy/Caddyfile"]))).toEqual(
      expect.arrayContaining([
        "proxy: does not mount ./deploy/Caddyfile read-only at /etc/caddy/Caddyfile",
        "proxy: bind-mounts ./deploy/Caddyfile; data goes on named volumes",
      ]),
    );
    expect(broken((c) => (c.services.proxy.depends_on = ["memory-core"]))).toContain("proxy: does not wait for a healthy memory-core");
    expect(broken((_, env) => delete env["scale-out"]!.COMPOSE_PROFILES)).toContain(
      "profiles/scale-out.env does not turn on the scale-out profile",
    );
  });

  it("a Caddyfile that leaves a replica out, sends elsewhere, skips /readyz or pins sessions", () => {
    const noop = () => undefined;
    expect(broken(noop, (text) => text.replace(" memory-core-3:8790", ""))).toContain(
      "deploy/Caddyfile: reverse_proxy does not send to memory-core-3:8790",
    );
    expect(broken(noop, (text) => text.replace("memory-core-3:8790", "memory-core-3:8790 chroma:8000"))).toContain(
      "deploy/Caddyfile: upstream chroma:8000 is no memory-core replica",
    );
    expect(broken(noop, (text) => text.replace("health_uri /readyz", "health_uri /healthz"))).toContain(
      "deploy/Caddyfile: no active health check on /readyz (health_uri)",
    );
    expect(broken(noop, (text) => text.replace("lb_policy least_conn", "lb_policy cookie"))).toContain(
      "deploy/Caddyfile: sticky load balancing; memory-core replicas are stateless and take any request",
    );
  });
});

describe("the scale-out profile", () => {
  it("runs memory-core three times over the one Chroma, behind the proxy, with the stack's own settings", () => {
    const compose = realInputs().compose as Dict;
    const replicas = ["memory-core", "memory-core-2", "memory-core-3"];
    for (const name of replicas) {
      expect(compose.services[name].environment.CAIRN_CHROMA_URL).toBe("http://chroma:8000");
      expect(compose.services[name].environment.CAIRN_TOKENS_FILE).toBe("/run/secrets/cairn_tokens");
    }
    expect(compose.services["memory-core-2"].profiles).toEqual(["scale-out"]);
    expect(compose.services.proxy.profiles).toEqual(["scale-out"]);
    // The default stack is untouched: no replica and no proxy without the profile.
    expect(compose.services["memory-core"].profiles).toBeUndefined();
    const caddyfile = read("deploy/Caddyfile");
    expect(caddyfile).toMatch(/reverse_proxy memory-core:8790 memory-core-2:8790 memory-core-3:8790 \{/);
    expect(realInputs().envFiles["scale-out"]).toMatchObject({ COMPOSE_PROFILES: "scale-out", PROXY_BIND: "127.0.0.1" });
  });
});
