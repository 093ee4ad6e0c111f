/**
 * Feature detection for editor APIs that not every host has (pure: takes the API object).
 * Hosts built on older VS Code, and forks without chat or MCP support, lack these
 * namespaces or functions; the extension then skips the feature and keeps its commands.
 */

/** The part of the `vscode` module that detection looks at, typed loosely on purpose. */
export interface EditorApiSurface {
  chat?: { createChatParticipant?: unknown };
  lm?: { registerMcpServerDefinitionProvider?: unknown };
  McpStdioServerDefinition?: unknown;
}

export function hasChatParticipants(api: EditorApiSurface | undefined): boolean {
  return typeof api?.chat?.createChatParticipant === "function";
}

export function hasMcpProviders(api: EditorApiSurface | undefined): boolean {
  return typeof api?.lm?.registerMcpServerDefinitionProvider === "function" && typeof api?.McpStdioServerDefinition === "function";
}
