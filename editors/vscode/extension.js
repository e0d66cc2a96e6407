// Starts `muh lsp` over stdio for .muh files; everything else is the server's.
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const [command, ...args] = vscode.workspace.getConfiguration("muh").get("server.command", ["muh", "lsp"]);
  client = new LanguageClient(
    "muh",
    "muh",
    { command, args, transport: TransportKind.stdio },
    { documentSelector: [{ scheme: "file", language: "muh" }, { scheme: "untitled", language: "muh" }] }
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
