/**
 * The MCP server's command line, derived from the language server's (pure): the same
 * interpreter or entry point, with the `serve` subcommand swapped for `mcp`.
 */
import type { ServerCommand } from "./pythonEnv";

export const SERVE_SUBCOMMAND = "serve";
export const MCP_SUBCOMMAND = "mcp";

/**
 * `<python> -m code_compass_server serve` → `<python> -m code_compass_server mcp --workspace A --workspace B --storage S`.
 * Options after `serve` belong to the language server and are dropped. Undefined when the
 * command has no `serve` word (a custom override this cannot safely rewrite) or no workspace.
 */
export function mcpCommandFor(server: ServerCommand, workspaces: readonly string[], storage?: string): ServerCommand | undefined {
  const at = server.args.lastIndexOf(SERVE_SUBCOMMAND);
  if (at < 0 || workspaces.length === 0) return undefined;
  const args = [...server.args.slice(0, at), MCP_SUBCOMMAND];
  for (const ws of workspaces) args.push("--workspace", ws);
  if (storage) args.push("--storage", storage);
  return { command: server.command, args };
}
