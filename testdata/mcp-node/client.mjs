// An MCP client built on the reference TypeScript SDK, for fsbox's
// end-to-end test (internal/mcpserver/node_e2e_test.go).
//
//   node client.mjs CALLS COMMAND [ARG...]
//
// spawns COMMAND ARG... and talks MCP to it over its stdin and stdout
// (StdioClientTransport): initialize, tools/list, then each tool call in
// CALLS, a JSON array of {"name": ..., "arguments": {...}}. It prints one
// JSON object on stdout:
//
//   {"server": {name, version}, "capabilities": {...}, "tools": [names],
//    "calls": [{"name", "isError", "text", "structured"}]}
//
// and exits 1, with the error on stderr, when the session fails. The SDK
// itself checks the handshake (a protocol version it supports) and each
// result's shape.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

async function main(argv) {
  if (argv.length < 2) {
    throw new Error("usage: node client.mjs CALLS COMMAND [ARG...]");
  }
  const calls = JSON.parse(argv[0]);
  const [command, ...args] = argv.slice(1);
  const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
  const client = new Client({ name: "fsbox-node-e2e", version: "1.0.0" });
  await client.connect(transport);
  try {
    const out = {
      server: client.getServerVersion(),
      capabilities: client.getServerCapabilities(),
      tools: [],
      calls: [],
    };
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      out.tools.push(...page.tools.map((t) => t.name));
      cursor = page.nextCursor;
    } while (cursor);
    for (const c of calls) {
      const res = await client.callTool({ name: c.name, arguments: c.arguments ?? {} });
      out.calls.push({
        name: c.name,
        isError: res.isError === true,
        text: (res.content ?? []).filter((p) => p.type === "text").map((p) => p.text).join("\n"),
        structured: res.structuredContent ?? null,
      });
    }
    process.stdout.write(JSON.stringify(out) + "\n");
  } finally {
    await client.close();
  }
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`client.mjs: ${err?.stack ?? err}\n`);
  process.exit(1);
});
