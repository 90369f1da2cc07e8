/**
 * The rules docker-compose.yml and the profile env files must keep (issue 6): pinned images, healthchecks,
 * restart and memory limits, named volumes, only memory-core published and on loopback by default, Chroma
 * and the model server on the internal network only, tokens as a secret, and every CAIRN_* variable one that
 * a service's config.ts reads. The scale-out profile (issue 20): memory-core replicas that are memory-core
 * again, behind a reverse proxy pinned by digest that health-checks every one of them on /readyz. Each broken
 * rule is one line in the returned list.
 */

export type EnvFile = Record<string, string>;

export interface ComposeInputs {
  /** docker-compose.yml as js-yaml parsed it. */
  compose: unknown;
  /** Profile env files by name: must hold `default` (profiles/default.env), `local-model` and `scale-out`. */
  envFiles: Record<string, EnvFile>;
  /** deploy/Caddyfile, the scale-out proxy's configuration. */
  caddyfile: string;
  /** Every CAIRN_* name some services/<name>/src/config.ts reads. */
  knownVariables: ReadonlySet<string>;
}

type Dict = Record<string, unknown>;

const PUBLISHED_SERVICE = "memory-core";
const LOCAL_MODEL_PROFILE = "local-model";
const SCALE_OUT_PROFILE = "scale-out";
const PROXY_SERVICE = "proxy";
const CADDYFILE = "./deploy/Caddyfile";
/** memory-core's replicas in the scale-out profile: memory-core-2, memory-core-3, ... */
const REPLICA = /^memory-core-\d+$/;
const TOKENS_SECRET_DIR = "/run/secrets/";

export function composeViolations({ compose, envFiles, knownVariables, caddyfile }: ComposeInputs): string[] {
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
    if (service.ports !== undefined && name !== PUBLISHED_SERVICE && name !== PROXY_SERVICE) {
      out.push(`${name}: publishes ports; only ${PUBLISHED_SERVICE} and the ${SCALE_OUT_PROFILE} ${PROXY_SERVICE} may`);
    }
    checkSecretsInEnvironment(name, service, out);
    const profiles = list(service.profiles);
    const core = ["chroma", PUBLISHED_SERVICE, "summarizer"].includes(name);
    if (core && profiles.length > 0) out.push(`${name}: belongs to a profile; the default stack needs it`);
    if (!core && !(profiles.length === 1 && [LOCAL_MODEL_PROFILE, SCALE_OUT_PROFILE].includes(String(profiles[0])))) {
      out.push(`${name}: an extra service must belong to one profile, ${LOCAL_MODEL_PROFILE} or ${SCALE_OUT_PROFILE}`);
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

  const replicas = Object.keys(services).filter((name) => REPLICA.test(name));
  for (const dependent of [PUBLISHED_SERVICE, "summarizer", ...replicas]) {
    if (dict(dict(dict(services[dependent]).depends_on).chroma).condition !== "service_healthy") {
      out.push(`${dependent}: does not wait for a healthy chroma`);
    }
  }

  checkPublished(PUBLISHED_SERVICE, dict(services[PUBLISHED_SERVICE]), defaults, out);
  checkIndexVolumes(services, [PUBLISHED_SERVICE, ...replicas], out);
  checkScaleOut(services, replicas, caddyfile, envFiles[SCALE_OUT_PROFILE], defaults, out);
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

/**
 * Each memory-core keeps its lexical snapshots (CAIRN_INDEX_DIR) on a named volume of its own: not in its tmpfs
 * data dir, where they would take RAM and go with the container, and not on another replica's volume.
 */
function checkIndexVolumes(services: Dict, names: string[], out: string[]): void {
  const owner = new Map<string, string>();
  for (const name of names) {
    const service = dict(services[name]);
    const indexDir = dict(service.environment).CAIRN_INDEX_DIR;
    if (indexDir === undefined || indexDir === "off") {
      out.push(`${name}: keeps no lexical snapshots (CAIRN_INDEX_DIR); a restart reads every record from Chroma`);
      continue;
    }
    const mount = list(service.volumes).find((v): v is string => typeof v === "string" && v.split(":")[1] === indexDir);
    if (mount === undefined || !isNamedVolume(mount)) {
      out.push(`${name}: CAIRN_INDEX_DIR (${String(indexDir)}) is not on a named volume`);
      continue;
    }
    const volume = mount.split(":")[0]!;
    const other = owner.get(volume);
    if (other !== undefined) out.push(`${name}: shares the snapshot volume ${volume} with ${other}`);
    else owner.set(volume, name);
  }
}

/**
 * The scale-out profile: at least two replicas besides memory-core, each memory-core again but unpublished; a
 * proxy pinned by digest, published on loopback by default, that waits for a ready memory-core, reads
 * deploy/Caddyfile read-only and is healthy only while it reaches a ready replica; a Caddyfile that sends to
 * every replica and health-checks each on /readyz.
 */
function checkScaleOut(
  services: Dict,
  replicas: string[],
  caddyfile: string,
  env: EnvFile | undefined,
  defaults: EnvFile,
  out: string[],
): void {
  const core = dict(services[PUBLISHED_SERVICE]);
  if (replicas.length < 2) out.push(`${SCALE_OUT_PROFILE}: fewer than two memory-core replicas besides ${PUBLISHED_SERVICE}`);
  // What makes a replica the same memory-core: everything but the published port.
  const same = ["image", "command", "environment", "secrets", "mem_limit", "healthcheck", "networks", "read_only", "cap_drop"];
  for (const name of replicas) {
    const replica = dict(services[name]);
    if (!list(replica.profiles).includes(SCALE_OUT_PROFILE)) out.push(`${name}: not in the ${SCALE_OUT_PROFILE} profile`);
    for (const key of same) {
      if (JSON.stringify(replica[key]) !== JSON.stringify(core[key])) out.push(`${name}: its ${key} differs from ${PUBLISHED_SERVICE}'s`);
    }
    if (replica.ports !== undefined) out.push(`${name}: publishes ports; replicas are reached through the ${PROXY_SERVICE}`);
  }

  const proxy = services[PROXY_SERVICE] === undefined ? undefined : dict(services[PROXY_SERVICE]);
  if (!proxy) {
    out.push(`${SCALE_OUT_PROFILE}: no ${PROXY_SERVICE} service`);
    return;
  }
  if (!list(proxy.profiles).includes(SCALE_OUT_PROFILE)) out.push(`${PROXY_SERVICE}: not in the ${SCALE_OUT_PROFILE} profile`);
  if (!/^caddy:\d+\.\d+\.\d+[^@]*@sha256:[0-9a-f]{64}$/.test(String(proxy.image))) {
    out.push(`${PROXY_SERVICE}: image ${String(proxy.image)} is not Caddy pinned by version and digest`);
  }
  checkPublished(PROXY_SERVICE, proxy, defaults, out);
  if (dict(dict(proxy.depends_on)[PUBLISHED_SERVICE]).condition !== "service_healthy") {
    out.push(`${PROXY_SERVICE}: does not wait for a healthy ${PUBLISHED_SERVICE}`);
  }
  if (!list(proxy.volumes).some((v) => v === `${CADDYFILE}:/etc/caddy/Caddyfile:ro`)) {
    out.push(`${PROXY_SERVICE}: does not mount ${CADDYFILE} read-only at /etc/caddy/Caddyfile`);
  }
  if (!JSON.stringify(dict(proxy.healthcheck).test ?? "").includes("/readyz")) {
    out.push(`${PROXY_SERVICE}: the healthcheck does not ask /readyz through the proxy`);
  }
  // The image's binary has a file capability: dropping every capability without adding it back fails its exec.
  if (list(proxy.cap_drop).includes("ALL") && !list(proxy.cap_add).includes("NET_BIND_SERVICE")) {
    out.push(`${PROXY_SERVICE}: drops ALL capabilities without adding NET_BIND_SERVICE back (caddy's exec fails)`);
  }

  const upstreams = new Set((/reverse_proxy\s+([^{\n]+)/.exec(caddyfile)?.[1] ?? "").trim().split(/\s+/).filter(Boolean));
  for (const name of [PUBLISHED_SERVICE, ...replicas]) {
    if (!upstreams.has(`${name}:8790`)) out.push(`deploy/Caddyfile: reverse_proxy does not send to ${name}:8790`);
  }
  for (const upstream of upstreams) {
    const host = upstream.split(":")[0]!;
    if (host !== PUBLISHED_SERVICE && !replicas.includes(host))
      out.push(`deploy/Caddyfile: upstream ${upstream} is no memory-core replica`);
  }
  if (!/^\s*health_uri\s+\/readyz\s*$/m.test(caddyfile)) out.push("deploy/Caddyfile: no active health check on /readyz (health_uri)");
  if (/^\s*lb_policy\s+(cookie|header|client_ip|ip_hash)\b/m.test(caddyfile)) {
    out.push("deploy/Caddyfile: sticky load balancing; memory-core replicas are stateless and take any request");
  }

  if (!env) out.push(`profiles/${SCALE_OUT_PROFILE}.env is missing`);
  else if (env.COMPOSE_PROFILES !== SCALE_OUT_PROFILE)
    out.push(`profiles/${SCALE_OUT_PROFILE}.env does not turn on the ${SCALE_OUT_PROFILE} profile`);
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
    if (name === PROXY_SERVICE && entry === `${CADDYFILE}:/etc/caddy/Caddyfile:ro`) continue; // configuration, read-only
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

function checkPublished(name: string, service: Dict, defaults: EnvFile, out: string[]): void {
  const ports = list(service.ports);
  if (ports.length === 0) out.push(`${name}: not published`);
  for (const port of ports) {
    if (typeof port !== "string") {
      out.push(`${name}: port entry in long syntax; use "host_ip:host_port:container_port"`);
      continue;
    }
    const resolved = resolveDefaults(port, defaults);
    if (!resolved.startsWith("127.0.0.1:") || resolved.split(":").length !== 3) {
      out.push(`${name}: port ${port} is not bound to 127.0.0.1 by default`);
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
