// Renders the chat-template test cases with @huggingface/jinja (the renderer transformers.js uses) as
// transformers' apply_chat_template calls it. usage: node reference_chat.js DIR TEMPLATE_DIR
// DIR holds node_modules from fetch_reference_tokenizers.sh; TEMPLATE_DIR holds *.jinja templates.
// Prints {"conversations": [...], "templates": {name: {"source", "special"}}, "cases": [...]} on stdout.
"use strict";
const fs = require("fs");
const path = require("path");
const dir = path.resolve(process.argv[2]);
const templateDir = path.resolve(process.argv[3]);
const req = require("module").createRequire(dir + "/");
const { Template } = req("@huggingface/jinja");

const conversations = [
  [
    { role: "system", content: "You are a careful assistant.  Answer briefly." },
    { role: "user", content: "Hello! What is 2+2?" },
    { role: "assistant", content: "  4, of course.\n" },
    { role: "user", content: "And x times x?" },
  ],
  [{ role: "user", content: "Hi" }],
  [
    { role: "user", content: "  Übung  macht den Meister 😀\twith  spaces " },
    { role: "assistant", content: "<think>hmm</think>Sure: \"quoted\" and 'single' \\ back" },
    { role: "user", content: "" },
  ],
  [
    { role: "system", content: "sys only then user" },
    { role: "user", content: "Line one\nLine two" },
  ],
];

function special(config) {
  const out = {};
  for (const key of ["bos_token", "eos_token", "unk_token", "pad_token"]) {
    const v = config[key];
    if (typeof v === "string") out[key] = v;
    else if (v && typeof v.content === "string") out[key] = v.content;
  }
  return out;
}

const templates = {};
for (const family of ["qwen2_5", "llama3"]) {
  const config = JSON.parse(fs.readFileSync(path.join(dir, "node_modules/@lenml/tokenizer-" + family,
                                                      "models/tokenizer_config.json"), "utf8"));
  templates[family] = { source: config.chat_template, special: special(config), config: true };
}
const fixedSpecial = { bos_token: "<s>", eos_token: "</s>" };
for (const file of fs.readdirSync(templateDir).sort()) {
  if (!file.endsWith(".jinja")) continue;
  templates[file.replace(/\.jinja$/, "")] = {
    source: fs.readFileSync(path.join(templateDir, file), "utf8"), special: fixedSpecial, config: false };
}

const cases = [];
for (const [name, t] of Object.entries(templates)) {
  const compiled = new Template(t.source);
  conversations.forEach((messages, k) => {
    for (const gen of [false, true]) {
      const c = { template: name, conversation: k, add_generation_prompt: gen };
      try {
        c.text = compiled.render({ messages, add_generation_prompt: gen, ...t.special });
      } catch (e) {
        c.error = String(e.message);
      }
      cases.push(c);
    }
  });
}
process.stdout.write(JSON.stringify({ conversations, templates, cases }));
