/** Structured log lines on stderr (stdout belongs to the stdio MCP transport). */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export function createLogger(component: string, sink: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const write = (level: string, message: string, fields?: Record<string, unknown>) =>
    sink(`${JSON.stringify({ time: new Date().toISOString(), level, component, message, ...fields })}\n`);
  return {
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
