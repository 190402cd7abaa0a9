// The lexer of the chat-template subset of Jinja: a template's source as tokens (text, statement and
// expression delimiters, names, literals, operators). Whitespace handling follows transformers' settings
// (trim_blocks, lstrip_blocks, one trailing newline dropped) as @huggingface/jinja applies them. Internal to
// the Jinja engine (jinja_parser.cc).
#pragma once

#include <string>
#include <vector>

namespace realign::jinja {

enum class Tok { kText, kOpenStmt, kCloseStmt, kOpenExpr, kCloseExpr, kName, kString, kNumber, kOp, kEnd };

struct Token {
  Tok type;
  std::string text;
  int line;
  bool is_float = false;
};

// The tokens of `source`, ending with one kEnd; comments dropped. Errors name `where` and the line.
std::vector<Token> lex_template(const std::string& source, const std::string& where);

}  // namespace realign::jinja
