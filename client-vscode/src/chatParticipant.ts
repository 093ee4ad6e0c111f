/**
 * `@compass` in the editor's chat view: each question goes through the language server's
 * codeCompass/ask (the grounded pipeline), streamed as Markdown from codeCompass/answerDelta,
 * then finished with the state, confidence, evidence anchors/references and follow-ups.
 * Skipped quietly where the editor has no chat API.
 */
import { askableSuggestions } from "./suggestions";
import { randomUUID } from "node:crypto";
import * as vscode from "vscode";
import { answerParts, type ChatPart, escapeMarkdown } from "./chatAnswer";
import { type ChatAnswerMetadata, type ChatTurn, conversationFor, followupPrompts } from "./chatHistory";
import { type EditorApiSurface, hasChatParticipants } from "./features";
import { CHAT_PARTICIPANT_ID } from "./ids";
import { toEditorLocation, toWireFile, type WireLocation } from "./locations";
import { folderRefs } from "./open";
import { type Answer, type AskParams, Methods } from "./protocol";
import type { ServerController } from "./server";

/** Wire location (1-based lines, workspace-relative) → editor Location, if it is in this workspace. */
function toLocation(loc: WireLocation): vscode.Location | undefined {
  const target = toEditorLocation(loc, folderRefs());
  if (!target) return undefined;
  // The end column is clamped by the editor to the line's length.
  const range = new vscode.Range(target.startLine, 0, target.endLine, Number.MAX_SAFE_INTEGER);
  return new vscode.Location(vscode.Uri.file(target.fsPath), range);
}

function emit(stream: vscode.ChatResponseStream, part: ChatPart): void {
  if (part.kind === "markdown") {
    stream.markdown(part.value);
    return;
  }
  const location = toLocation(part.location);
  if (part.kind === "reference") {
    if (location) stream.reference(location);
  } else if (location) {
    stream.anchor(location, part.title);
  } else {
    stream.markdown(escapeMarkdown(part.title)); // not in this workspace's folders: plain text
  }
}

function responseText(turn: vscode.ChatResponseTurn): string {
  return turn.response
    .map((p) => (p instanceof vscode.ChatResponseMarkdownPart ? p.value.value : p instanceof vscode.ChatResponseAnchorPart ? (p.title ?? "") : ""))
    .join("");
}

function chatTurns(history: vscode.ChatContext["history"]): ChatTurn[] {
  return history.map((t): ChatTurn =>
    t instanceof vscode.ChatRequestTurn ? { kind: "request", prompt: t.prompt } : { kind: "response", text: responseText(t), metadata: t.result.metadata },
  );
}

/** The editor's own attachments (the active file or selection, shown greyed until the user adds them). */
const IMPLICIT_REFERENCE = "vscode.implicit";

/**
 * The file and lines the user attached on purpose (#file, #selection, a dragged file). The
 * editor's implicit context is left out: a selection becomes evidence with score 1, so only
 * a deliberate one should.
 */
async function askContextOf(request: vscode.ChatRequest): Promise<Pick<AskParams, "activeFile" | "selection">> {
  for (const ref of request.references) {
    if (ref.id.startsWith(IMPLICIT_REFERENCE)) continue;
    const value = ref.value;
    const uri = value instanceof vscode.Location ? value.uri : value instanceof vscode.Uri ? value : undefined;
    const file = uri?.scheme === "file" ? toWireFile(uri.fsPath, folderRefs()) : undefined;
    if (!uri || !file) continue;
    if (value instanceof vscode.Location && !value.range.isEmpty) {
      const text = (await vscode.workspace.openTextDocument(uri)).getText(value.range);
      return { activeFile: file.path, selection: { startLine: value.range.start.line + 1, endLine: value.range.end.line + 1, text } };
    }
    return { activeFile: file.path };
  }
  return {};
}

export function createHandler(server: ServerController, log: vscode.LogOutputChannel): vscode.ChatRequestHandler {
  return async (request, context, stream, token): Promise<vscode.ChatResult> => {
    const conversation = conversationFor(chatTurns(context.history), randomUUID);
    const requestId = randomUUID();
    const metadata: ChatAnswerMetadata = { conversationId: conversation.conversationId, suggestions: [] };
    const params: AskParams = { query: request.prompt.trim(), requestId, ...conversation, ...(await askContextOf(request)) };
    if (!params.query) {
      stream.markdown("Ask a question about this workspace, e.g. *How is the configuration loaded?*");
      return { metadata };
    }
    let streamed = "";
    const deltas = server.onAnswerDelta((d) => {
      if (d?.requestId !== requestId || typeof d.text !== "string" || token.isCancellationRequested) return;
      streamed += d.text;
      stream.markdown(d.text);
    });
    // The stop button ends the wait at once, whatever the server does with its $/cancelRequest.
    let onCancel: vscode.Disposable | undefined;
    const cancelled = new Promise<undefined>((resolve) => {
      onCancel = token.onCancellationRequested(() => resolve(undefined));
    });
    stream.progress("Searching the evidence…");
    try {
      const answer = await Promise.race([server.request<Answer>(Methods.ask, params, token), cancelled]);
      if (!answer || token.isCancellationRequested) return { metadata };
      for (const part of answerParts(answer, streamed)) emit(stream, part);
      metadata.suggestions = askableSuggestions(answer.actions?.length ? answer.actions : answer.suggestions);
      log.info(
        `@compass answered in conversation ${metadata.conversationId}: ${answer.state} ${answer.confidence?.score ?? "?"}, ` +
          `${answer.evidences?.length ?? 0} evidence, ${streamed.length} characters streamed`,
      );
      return { metadata };
    } catch (err) {
      if (token.isCancellationRequested) return { metadata };
      const message = err instanceof Error ? err.message : String(err);
      log.warn(`@compass failed: ${message}`);
      return { errorDetails: { message: `Code Compass: ${message}` }, metadata };
    } finally {
      deltas.dispose();
      onCancel?.dispose();
    }
  };
}

/** Register `@compass`; undefined (and a log line) where the editor has no chat participants. */
export function registerChatParticipant(
  server: ServerController,
  log: vscode.LogOutputChannel,
): vscode.Disposable | undefined {
  if (!hasChatParticipants(vscode as unknown as EditorApiSurface)) {
    log.info("Chat: this editor has no chat participant API; @compass is not available (the commands still are).");
    return undefined;
  }
  const participant = vscode.chat.createChatParticipant(CHAT_PARTICIPANT_ID, createHandler(server, log));
  participant.iconPath = new vscode.ThemeIcon("compass");
  participant.followupProvider = {
    provideFollowups: (result) => followupPrompts(result.metadata).map((prompt) => ({ prompt, label: prompt })),
  };
  log.info(`Chat participant registered: @compass (${CHAT_PARTICIPANT_ID})`);
  return participant;
}
