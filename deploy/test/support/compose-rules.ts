/**
 * The rules docker-compose.yml and the profile env files must keep (issue 6): pinned images, healthchecks,
 * restart and memory limits, named volumes, only memory-core published and on loopback by default, Chroma
 * and the model server on the internal network only, tokens as a secret, and every CAIRN_* variable one that
 * a service's config.ts reads. Each broken rule is one line in the returned list.
 */

export type EnvFile = Record<string, string>;

export interface ComposeInputs {
  /** docker-compose.yml as js-yaml parsed it. */
  compose: unknown;
  /** Profile env files by name: must hold `default` (profiles/default.env) and `local-model`. */
  envFiles: Record<string, EnvFile>;
  /** Every CAIRN_* name some services/<name>/src/config.ts reads. */
  knownVariables: ReadonlySet<string>;
}

type Dict = Record<string, unknown>;

const PUBLISHED_SERVICE = "memory-core";
const LOCAL_MODEL_PROFILE = "local-model";
const TOKENS_SECRET_DIR = "/run/secrets/";

export function composeViolations({ compose, envFiles, knownVariables }: ComposeInputs): string[] {
  const out: string[] = [];
  const root = dict(compose);
  const services = dict(root.services);
  const volumes = dict(root.volumes);
  const networks = dict(root.networks);
  const secrets = dict(root.secrets);
  const defaults = envFiles.default ?? {};

  if (!services.chroma) out.push("no chroma service");
  if (!services[PUBLISHED_SERVICE]) out.push(`no ${PUBLISHED_SERVICE} service`);
  if (!services.summarizer) out.push("no summarizer service");

  for (const [name, raw] of Object.entries(services)) {
    const service = dict(raw);
    const oneShot = service.restart === "no";
    checkImage(name, service, out);
    if (!oneShot) {
      const healthcheck = dict(service.healthcheck);
      if (healthcheck.disable === true || !Array.isArray(healthcheck.test) || healthcheck.test.length < 2) {
        out.push(`${name}: no healthcheck`);
      }
      if (!["unless-stopped", "always", "on-failure"].includes(String(service.restart))) {
        out.push(`${name}: no restart policy`);
      }
    }
    if (service.mem_limit === undefined) out.push(`${name}: no memory limit (mem_limit)`);
    checkVolumes(name, service, volumes, out);
    if (service.ports !== undefined && name !== PUBLISHED_SERVICE) out.push(`${name}: publishes ports; only ${PUBLISHED_SERVICE} may`);
    checkSecretsInEnvironment(name, service, out);
    const profiles = list(service.profiles);
    const core = ["chroma", PUBLISHED_SERVICE, "summarizer"].includes(name);
    if (core && profiles.length > 0) out.push(`${name}: belongs to a profile; the default stack needs it`);
    if (!core && !(profiles.length === 1 && profiles[0] === LOCAL_MODEL_PROFILE)) {
      out.push(`${name}: an extra service must belong to the ${LOCAL_MODEL_PROFILE} profile`);
    }
  }

  const chroma = dict(services.chroma);
  if (!list(chroma.volumes).some((v) => typeof v === "string" && v.endsWith(":/data") && isNamedVolume(v))) {
    out.push("chroma: its data (/data) is not on a named volume");
  }
  if (!JSON.stringify(dict(chroma.healthcheck).test ?? "").includes("/api/v2/heartbeat")) {
    out.push("chroma: the healthcheck does not ask its heartbeat (/api/v2/heartbeat)");
  }
  for (const network of networkNames(chroma)) {
    if (dict(networks[network]).internal !== true) out.push(`chroma: on network ${network}, which is not internal`);
  }
  if (networkNames(chroma).length === 0) out.push("chroma: on the default network, which is not internal");

  for (const dependent of [PUBLISHED_SERVICE, "summarizer"]) {
    if (dict(dict(dict(services[dependent]).depends_on).chroma).condition !== "service_healthy") {
      out.push(`${dependent}: does not wait for a healthy chroma`);
    }
  }

  checkPublished(dict(services[PUBLISHED_SERVICE]), defaults, out);
  checkTokensSecret(dict(services[PUBLISHED_SERVICE]), secrets, out);

  const usedVariables = new Set<string>();
  const interpolations = collectInterpolations(compose);
  for (const { name } of interpolations) usedVariables.add(name);
  collectEnvironmentNames(services).forEach((name) => usedVariables.add(name));
  for (const file of Object.values(envFiles)) Object.keys(file).forEach((name) => usedVariables.add(name));
  for (const name of [...usedVariables].sort()) {
    if (name.startsWith("CAIRN_") && !knownVariables.has(name)) {
      out.push(`${name}: no service's config.ts reads it`);
    }
  }

  checkEnvFiles(interpolations, envFiles, out);
  checkLocalModelProfile(services, envFiles[LOCAL_MODEL_PROFILE], out);
  return out;
}

function checkImage(name: string, service: Dict, out: string[]): void {
  const image = typeof service.image === "string" ? service.image : undefined;
  if (!image) {
    out.push(`${name}: no image name${service.build ? " for its build" : ""}`);
    return;
  }
  if (image.includes("@sha256:")) return;
  const lastSegment = image.slice(image.lastIndexOf("/") + 1);
  const tag = lastSegment.includes(":") ? lastSegment.slice(lastSegment.indexOf(":") + 1) : undefined;
  if (!tag || tag === "latest" || tag.includes("$")) out.push(`${name}: image ${image} is not pinned to a version`);
}

function checkVolumes(name: string, service: Dict, declared: Dict, out: string[]): void {
  for (const entry of list(service.volumes)) {
    if (typeof entry !== "string") {
      out.push(`${name}: volume entry in long syntax; use "volume:/path"`);
      continue;
    }
    if (!isNamedVolume(entry)) out.push(`${name}: bind-mounts ${entry.split(":")[0]}; data goes on named volumes`);
    else if (!(entry.split(":")[0]! in declared)) out.push(`${name}: volume ${entry.split(":")[0]} is not declared`);
  }
}

function isNamedVolume(entry: string): boolean {
  const source = entry.split(":")[0] ?? "";
  return /^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(source) && entry.includes(":");
}

function checkSecretsInEnvironment(name: string, service: Dict, out: string[]): void {
  for (const [variable, value] of Object.entries(dict(service.environment))) {
    const secretLike = /(_API_KEY|_PASSWORD|_SECRET)$/.test(variable) || variable === "CAIRN_TOKEN";
    if (secretLike && typeof value === "string" && value !== "" && !/^\$\{[A-Za-z0-9_]+(:-)?\}$/.test(value)) {
      out.push(`${name}: ${variable} is written into the compose file; take it from the environment`);
    }
  }
}

function checkPublished(service: Dict, defaults: EnvFile, out: string[]): void {
  const ports = list(service.ports);
  if (ports.length === 0) out.push(`${PUBLISHED_SERVICE}: not published`);
  for (const port of ports) {
    if (typeof port !== "string") {
      out.push(`${PUBLISHED_SERVICE}: port entry in long syntax; use "host_ip:host_port:container_port"`);
      continue;
    }
    const resolved = resolveDefaults(port, defaults);
    if (!resolved.startsWith("127.0.0.1:") || resolved.split(":").length !== 3) {
      out.push(`${PUBLISHED_SERVICE}: port ${port} is not bound to 127.0.0.1 by default`);
    }
  }
}

function checkTokensSecret(service: Dict, secrets: Dict, out: string[]): void {
  const attached = list(service.secrets).map((s) => (typeof s === "string" ? s : String(dict(s).source)));
  const tokensFile = String(dict(service.environment).CAIRN_TOKENS_FILE ?? "");
  const secretName = tokensFile.startsWith(TOKENS_SECRET_DIR) ? tokensFile.slice(TOKENS_SECRET_DIR.length) : undefined;
  if (!secretName || !attached.includes(secretName)) {
    out.push(`${PUBLISHED_SERVICE}: CAIRN_TOKENS_FILE is not a compose secret it mounts`);
  } else if (typeof dict(secrets[secretName]).file !== "string") {
    out.push(`${PUBLISHED_SERVICE}: secret ${secretName} is not declared with a file`);
  }
}

interface Interpolation {
  name: string;
  fallback: string | undefined;
}

/** `${NAME}`, `${NAME:-fallback}`, `${NAME-fallback}`, `${NAME:?err}` in every string; `$$` is a literal `$`. */
function collectInterpolations(node: unknown, into: Interpolation[] = []): Interpolation[] {
  if (typeof node === "string") {
    const text = node.replaceAll("$$", "");
    for (const match of text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g)) {
      into.push({ name: match[1]!, fallback: match[2]?.endsWith("-") ? match[3] : undefined });
    }
    for (const match of text.matchAll(/\$([A-Za-z_][A-Za-z0-9_]*)/g)) into.push({ name: match[1]!, fallback: undefined });
  } else if (Array.isArray(node)) node.forEach((item) => collectInterpolations(item, into));
  else if (node && typeof node === "object") Object.values(node).forEach((item) => collectInterpolations(item, into));
  return into;
}

function collectEnvironmentNames(services: Dict): string[] {
  return Object.values(services).flatMap((service) => Object.keys(dict(dict(service).environment)));
}

function resolveDefaults(text: string, env: EnvFile): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}/g, (_, name: string, fallback?: string) =>
    env[name] !== undefined && env[name] !== "" ? env[name]! : (fallback ?? ""),
  );
}

function checkEnvFiles(interpolations: Interpolation[], envFiles: Record<string, EnvFile>, out: string[]): void {
  const defaults = envFiles.default;
  if (!defaults) {
    out.push("profiles/default.env is missing");
    return;
  }
  for (const { name, fallback } of interpolations) {
    if (!(name in defaults)) out.push(`${name}: used in docker-compose.yml but not listed in profiles/default.env`);
    else if (fallback !== undefined && fallback !== defaults[name]) {
      out.push(`${name}: docker-compose.yml falls back to "${fallback}", profiles/default.env says "${defaults[name]}"`);
    }
  }
  const composeNames = new Set(interpolations.map((i) => i.name));
  for (const [file, values] of Object.entries(envFiles)) {
    for (const name of Object.keys(defaults)) {
      if (!(name in values)) out.push(`profiles/${file}.env does not set ${name}`);
    }
    for (const name of Object.keys(values)) {
      if (name !== "COMPOSE_PROFILES" && !composeNames.has(name)) {
        out.push(`profiles/${file}.env sets ${name}, which docker-compose.yml never uses`);
      }
    }
  }
}

function checkLocalModelProfile(services: Dict, env: EnvFile | undefined, out: string[]): void {
  if (!env) {
    out.push("profiles/local-model.env is missing");
    return;
  }
  if (env.COMPOSE_PROFILES !== LOCAL_MODEL_PROFILE)
    out.push(`profiles/local-model.env does not turn on the ${LOCAL_MODEL_PROFILE} profile`);
  if (env.CAIRN_EMBEDDINGS !== "openai") out.push("profiles/local-model.env does not take embeddings from the model server");
  for (const variable of ["CAIRN_EMBEDDINGS_BASE_URL", "CAIRN_CHAT_BASE_URL"]) {
    let host: string | undefined;
    try {
      host = new URL(env[variable] ?? "").hostname;
    } catch {
      host = undefined;
    }
    const server = host ? dict(services[host]) : {};
    if (!host || !list(server.profiles).includes(LOCAL_MODEL_PROFILE)) {
      out.push(`profiles/local-model.env: ${variable} does not point at the profile's model server`);
    }
  }
  for (const variable of ["CAIRN_EMBEDDINGS_MODEL", "CAIRN_CHAT_MODEL"]) {
    if (!env[variable]) out.push(`profiles/local-model.env does not name ${variable}`);
  }
}

function networkNames(service: Dict): string[] {
  const networks = service.networks;
  if (Array.isArray(networks)) return networks.map(String);
  return Object.keys(dict(networks));
}

function dict(value: unknown): Dict {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Dict) : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** KEY=VALUE lines; `#` starts a comment line; no quoting (the profile files use none). */
export function parseEnvFile(text: string): EnvFile {
  const out: EnvFile = {};
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith("#")) continue;
    const eq = trimmed.indexOf("=");
    if (eq > 0) out[trimmed.slice(0, eq)] = trimmed.slice(eq + 1);
  }
  return out;
}

/** The CAIRN_* names a config.ts source mentions. */
export function cairnVariablesIn(source: string): string[] {
  return [...new Set(source.match(/\bCAIRN_[A-Z0-9_]+\b/g) ?? [])];
}
