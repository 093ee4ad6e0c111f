/**
 * Registers Code Compass's MCP server (`code-compass mcp`) with the editor, so agent mode
 * can call search_code, ask_code, open_file and find_symbol with no hand-written mcp.json.
 * The command is the language server's, with `mcp` instead of `serve`, every workspace
 * folder and the same index storage (the language server holds the writer lock; the MCP
 * process reads the same index). Skipped quietly where the editor has no MCP provider API.
 */
import * as vscode from "vscode";
import { type EditorApiSurface, hasMcpProviders } from "./features";
import { MCP_PROVIDER_ID, MCP_SERVER_LABEL } from "./ids";
import { mcpCommandFor } from "./mcpCommand";
import type { ApiKeyStore } from "./secrets";
import type { ServerController } from "./server";

function fileFolders(): vscode.WorkspaceFolder[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file");
}

/** The definition for the current folders and server command; undefined until both are known. */
function currentDefinition(context: vscode.ExtensionContext, server: ServerController): vscode.McpStdioServerDefinition | undefined {
  const folders = fileFolders();
  const cmd = server.command && mcpCommandFor(server.command, folders.map((f) => f.uri.fsPath), context.storageUri?.fsPath);
  if (!cmd) return undefined;
  const version = String((context.extension.packageJSON as { version?: unknown }).version ?? "0");
  const definition = new vscode.McpStdioServerDefinition(MCP_SERVER_LABEL, cmd.command, cmd.args, {}, version);
  definition.cwd = folders[0]?.uri;
  return definition;
}

/** Register the provider; undefined (and a log line) where the editor has no MCP provider API. */
export function registerMcpProvider(
  context: vscode.ExtensionContext,
  server: ServerController,
  keys: ApiKeyStore,
  log: vscode.LogOutputChannel,
): vscode.Disposable | undefined {
  if (!hasMcpProviders(vscode as unknown as EditorApiSurface)) {
    log.info("MCP: this editor has no MCP server-definition API (VS Code 1.101+); the MCP server is not registered.");
    return undefined;
  }
  const changed = new vscode.EventEmitter<void>();
  const provider: vscode.McpServerDefinitionProvider<vscode.McpStdioServerDefinition> = {
    onDidChangeMcpServerDefinitions: changed.event,
    provideMcpServerDefinitions: () => {
      const definition = currentDefinition(context, server);
      if (definition) log.info(`MCP server definition provided: ${definition.label}: ${definition.command} ${definition.args.join(" ")}`);
      else log.info("MCP server definition: none yet (the server command or a workspace folder is missing)");
      return definition ? [definition] : [];
    },
    // The key is added only when the editor starts the server: definitions may be cached, launches are not.
    resolveMcpServerDefinition: async (definition) => {
      const key = await keys.get();
      if (key) definition.env = { ...definition.env, ANTHROPIC_API_KEY: key };
      log.info(`MCP server starting: ${definition.label}`);
      return definition;
    },
  };
  const registration = vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, provider);
  log.info(`MCP server definition provider registered: ${MCP_PROVIDER_ID}`);
  return vscode.Disposable.from(
    registration,
    changed,
    server.onDidResolveCommand(() => changed.fire()),
    vscode.workspace.onDidChangeWorkspaceFolders(() => changed.fire()),
  );
}
