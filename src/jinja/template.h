// jinja::Template: the subset of Jinja that HF chat templates use, parsed once and rendered with a context
// (messages, bos_token, add_generation_prompt, ...) the way transformers' apply_chat_template does
// (trim_blocks and lstrip_blocks on). Supported: text, {{ }}, comments, whitespace control, if/elif/else,
// for (tuple targets, `if` filter, else, loop.*, break/continue), set (names, tuples, namespace attributes,
// blocks), namespace(), range(), raise_exception(); expressions with literals, lists, dicts, tuples,
// attributes, subscripts and slices, calls, filters, `is` tests, `in`, arithmetic, `~`, conditionals.
// Anything else (macro, call, include, extends, filter blocks, unknown filters/tests/methods) is refused with
// an Error naming the template and line.
#pragma once

#include <memory>
#include <string>

#include "jinja/value.h"

namespace realign::jinja {

struct Node;

class Template {
 public:
  // Throws Error("<where>:<line>", ...) for syntax this subset does not know.
  Template(const std::string& source, const std::string& where);
  ~Template();
  Template(Template&&) noexcept;
  // `context`: the template's variables. Throws Error naming where:line for failures while rendering, and for
  // raise_exception() with the template's message.
  std::string render(const Dict& context) const;

 private:
  std::string where_;
  std::shared_ptr<const Node> root_;
};

}  // namespace realign::jinja
