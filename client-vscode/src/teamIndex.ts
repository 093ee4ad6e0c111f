/** The team index's password in SecretStorage (never in settings), and the commands that set it. */
import * as vscode from "vscode";
import { StoredSecret } from "./secrets";

const KEY = "codeCompass.teamIndexPassword";

export class TeamIndexPassword extends StoredSecret {
  constructor(context: vscode.ExtensionContext) {
    super(context, KEY);
  }

  async promptAndStore(): Promise<boolean> {
    const value = await vscode.window.showInputBox({
      title: "Code Compass: Team Index Password",
      prompt: "The password of the role in codeCompass.teamIndex.url. Stored in VS Code's secret storage and given only to the Code Compass server process.",
      password: true,
      ignoreFocusOut: true,
    });
    if (!value) return false;
    await this.store(value, "Code Compass: team index password saved; the server restarts with it.");
    return true;
  }

  clear(): Promise<void> {
    return this.remove("Code Compass: team index password removed.");
  }
}
