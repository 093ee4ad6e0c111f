/** Search Code: a QuickPick with live, debounced queries and a live preview of the active hit. */
import * as vscode from "vscode";
import { hitItemText, searchPlaceholder } from "./format/hits";
import { openWireLocation } from "./open";
import { Methods, type SearchHit, type SearchParams, type SearchResult } from "./protocol";
import type { ServerController } from "./server";

const DEBOUNCE_MS = 200;
const SEARCH_TOP_K = 20; // the server's MAX_TOP_K: a picker shows more than a question uses

type HitItem = vscode.QuickPickItem & { hit: SearchHit };

export async function searchCode(server: ServerController, initial = ""): Promise<void> {
  const pick = vscode.window.createQuickPick<HitItem>();
  pick.title = "Code Compass: Search Code";
  const placeholder = "Search the workspace by meaning or by name (e.g. where is the config parsed?)";
  pick.placeholder = placeholder;
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  pick.value = initial;
  const multiRoot = (vscode.workspace.workspaceFolders?.length ?? 0) > 1;
  let timer: NodeJS.Timeout | undefined;
  let seq = 0;
  let cancel: vscode.CancellationTokenSource | undefined;

  const runQuery = async (query: string): Promise<void> => {
    const mine = ++seq;
    cancel?.cancel();
    cancel = new vscode.CancellationTokenSource();
    if (!query.trim()) {
      pick.items = [];
      pick.busy = false;
      return;
    }
    pick.busy = true;
    try {
      const params: SearchParams = { query, topK: SEARCH_TOP_K };
      const result = await server.request<SearchResult>(Methods.search, params, cancel.token);
      if (mine !== seq) return;
      // alwaysShow: the server ranked these; QuickPick's own fuzzy filter must not hide them.
      pick.items = result.hits.map((hit) => ({ ...hitItemText(hit, multiRoot), hit, alwaysShow: true }));
      pick.placeholder = searchPlaceholder(result, placeholder);
    } catch (err) {
      if (mine !== seq) return;
      pick.items = [];
      const message = err instanceof Error ? err.message : String(err);
      pick.title = `Code Compass: Search Code — ${message}`;
    } finally {
      if (mine === seq) pick.busy = false;
    }
  };

  pick.onDidChangeValue((value) => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void runQuery(value), DEBOUNCE_MS);
  });
  pick.onDidChangeActive((items) => {
    const hit = items[0]?.hit;
    if (hit) void openWireLocation(hit, { preview: true, preserveFocus: true });
  });
  pick.onDidAccept(() => {
    const hit = pick.selectedItems[0]?.hit ?? pick.activeItems[0]?.hit;
    if (!hit) return;
    pick.hide();
    void openWireLocation(hit, { preview: false, preserveFocus: false });
  });
  pick.onDidHide(() => {
    if (timer) clearTimeout(timer);
    cancel?.cancel();
    pick.dispose();
  });
  pick.show();
  if (initial) void runQuery(initial);
}
