#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/pcre2_regex.h"

#include <pcre2.h>

#include <memory>

#include "core/error.h"
#include "core/utf8.h"

namespace realign::tokenizer {

Pcre2Regex::Pcre2Regex(const std::string& pattern, const std::string& where) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &err, &offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    throw Error(where, "regex does not compile at offset " + std::to_string(offset) + ": " +
                           reinterpret_cast<const char*>(msg));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // optional speed-up; the interpreter is used if it fails
  code_ = code;
}

Pcre2Regex::~Pcre2Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

std::vector<std::pair<size_t, size_t>> Pcre2Regex::find_all(std::string_view text) const {
  auto* code = static_cast<pcre2_code*>(code_);
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md(
      pcre2_match_data_create_from_pattern(code, nullptr), &pcre2_match_data_free);
  std::vector<std::pair<size_t, size_t>> out;
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    int rc = pcre2_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, md.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(rc, msg, sizeof msg);
      throw Error("tokenizer", std::string("regex match failed: ") + reinterpret_cast<const char*>(msg));
    }
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
    size_t b = ov[0], e = ov[1];
    if (e > b) {
      out.emplace_back(b, e);
      pos = e;
    } else {
      pos = b;  // empty match: step over one character
      if (pos < text.size()) next_code_point(text, pos);
    }
  }
  return out;
}

}  // namespace realign::tokenizer
