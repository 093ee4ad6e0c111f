/**
 * Identifiers that package.json contributes and the code registers, in one place
 * (a unit test checks that package.json says the same).
 */

/** The chat participant, invoked as `@compass` in the editor's chat view. */
export const CHAT_PARTICIPANT_ID = "code-compass.compass";
export const CHAT_PARTICIPANT_NAME = "compass";

/** The MCP server-definition provider and the label of the one server it defines. */
export const MCP_PROVIDER_ID = "codeCompass.mcp";
export const MCP_SERVER_LABEL = "Code Compass";
