/** The status bar item: index phase at a glance; click → details QuickPick with actions. */
import * as vscode from "vscode";
import { type Phase, statusDetails, statusView } from "./format/status";
import { Methods, type ProjectState, type StatusResult } from "./protocol";
import type { ServerController } from "./server";

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private projects: ProjectState[] | undefined;
  private override: Phase | undefined = "starting";

  constructor(private readonly server: ServerController) {
    this.item = vscode.window.createStatusBarItem("codeCompass.status", vscode.StatusBarAlignment.Left, 10);
    this.item.name = "Code Compass";
    this.item.command = "codeCompass.showStatus";
    server.onDidChangePhase((phase) => {
      if (phase === "running") {
        this.override = undefined;
        void this.refresh();
      } else {
        this.override = phase === "starting" ? "starting" : "stopped";
        this.projects = phase === "starting" ? undefined : this.projects;
      }
      this.render();
    });
    server.onIndexState((projects) => {
      this.projects = projects;
      this.render();
    });
    this.render();
    this.item.show();
  }

  private render(): void {
    const view = statusView(this.projects, this.override);
    this.item.text = view.text;
    this.item.tooltip = `${view.tooltip}\n(click for details)`;
    this.item.backgroundColor = view.phase === "error" || view.phase === "stopped" ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
    this.item.accessibilityInformation = { label: `Code Compass: ${view.phase}` };
  }

  /** Pull the state once (the server may have sent indexState before we listened). */
  async refresh(): Promise<StatusResult | undefined> {
    try {
      const status = await this.server.request<StatusResult>(Methods.status, {});
      this.projects = status.projects;
      this.render();
      return status;
    } catch {
      return undefined;
    }
  }

  async showDetails(): Promise<void> {
    const status = this.server.phase === "running" ? await this.refresh() : undefined;
    type Item = vscode.QuickPickItem & { action?: string };
    const items: Item[] = status
      ? statusDetails(status)
      : [{ label: "$(error) Server not running", description: "see the output for the reason" }];
    items.push({ label: "", kind: vscode.QuickPickItemKind.Separator });
    items.push({ label: "$(refresh) Reindex", action: "codeCompass.reindex" });
    items.push({ label: "$(key) Set Anthropic API Key", action: "codeCompass.setApiKey" });
    items.push({ label: "$(output) Show Output", action: "codeCompass.showOutput" });
    items.push({ label: "$(debug-restart) Restart Server", action: "codeCompass.restartServer" });
    const picked = await vscode.window.showQuickPick(items, { title: "Code Compass status", matchOnDescription: true });
    if (picked?.action) await vscode.commands.executeCommand(picked.action);
  }

  dispose(): void {
    this.item.dispose();
  }
}
