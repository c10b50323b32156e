// An MCP client built on the reference TypeScript SDK, for fsbox's
// end-to-end test (internal/mcpserver/node_e2e_test.go).
//
//   node client.mjs CALLS COMMAND [ARG...]
//   node client.mjs CALLS http://HOST:PORT/   (a server already listening;
//                                             FSBOX_MCP_TOKEN is its token)
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
// result's shape. A call's content blocks that are not text (an image, say)
// are in its "media" ({type, mimeType, data, uri}); a call the server
// answers with a JSON-RPC error, not a result, has isError true and the
// error in "rpcError" (the session goes on; a lost connection or a timeout
// still ends it).
//
// The SDK gives the spawned server only a few variables of its own
// environment (HOME, PATH, ...); with MCP_CLIENT_INHERIT_ENV=1 it gets all
// of client.mjs's environment but that variable (the differential test,
// internal/mcpserver/diff_test.go, sets a clean one: HOME, TZ, XDG_*).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

async function main(argv) {
  if (argv.length < 2) {
    throw new Error("usage: node client.mjs CALLS COMMAND [ARG...]");
  }
  const calls = JSON.parse(argv[0]);
  const [command, ...args] = argv.slice(1);
  let transport;
  if (/^https?:\/\//.test(command)) {
    // A server already listening: streamable HTTP, with the bearer token
    // of FSBOX_MCP_TOKEN.
    transport = new StreamableHTTPClientTransport(new URL(command), {
      requestInit: { headers: { Authorization: `Bearer ${process.env.FSBOX_MCP_TOKEN ?? ""}` } },
    });
  } else {
    const params = { command, args, stderr: "inherit" };
    if (process.env.MCP_CLIENT_INHERIT_ENV === "1") {
      params.env = { ...process.env };
      delete params.env.MCP_CLIENT_INHERIT_ENV;
    }
    transport = new StdioClientTransport(params);
  }
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
      let res;
      try {
        res = await client.callTool({ name: c.name, arguments: c.arguments ?? {} });
      } catch (err) {
        // A lost connection or a timeout (-32000, -32001) ends the session.
        if (typeof err?.code !== "number" || err.code === -32000 || err.code === -32001) {
          throw err;
        }
        out.calls.push({ name: c.name, isError: true, text: "", structured: null, rpcError: String(err?.message ?? err) });
        continue;
      }
      const content = res.content ?? [];
      const media = content
        .filter((p) => p.type !== "text")
        .map((p) => ({
          type: p.type,
          mimeType: p.mimeType ?? p.resource?.mimeType ?? "",
          data: p.data ?? p.resource?.blob ?? p.resource?.text ?? "",
          uri: p.resource?.uri ?? p.uri ?? "",
        }));
      const call = {
        name: c.name,
        isError: res.isError === true,
        text: content.filter((p) => p.type === "text").map((p) => p.text).join("\n"),
        structured: res.structuredContent ?? null,
      };
      if (media.length > 0) {
        call.media = media;
      }
      out.calls.push(call);
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
