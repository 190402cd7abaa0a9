// The parser of the chat-template subset of Jinja: the lexer's tokens (jinja_lexer.h) into the Node tree
// (jinja_ast.h). Its statements (blocks, if, for, set, macro) are jinja_parser.cc, by recursive descent; its
// expressions are jinja_expression_parser.cc, one method per precedence level. Internal to the Jinja engine.
#pragma once

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "jinja/ast.h"
#include "jinja/lexer.h"

namespace realign::jinja {

class Parser {
 public:
  Parser(std::vector<Token> tokens, const std::string& where) : t_(std::move(tokens)), where_(where) {}

  // The whole template.
  NodePtr parse_all() {
    NodePtr root = block({});
    if (peek().type != Tok::kEnd) fail("unexpected '" + peek().text + "'");
    return root;
  }

 private:
  const Token& peek(size_t k = 0) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  const Token& next() { return t_[std::min(p_++, t_.size() - 1)]; }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(where_ + ":" + std::to_string(peek().line), what);
  }
  bool is_op(const char* op, size_t k = 0) const { return peek(k).type == Tok::kOp && peek(k).text == op; }
  bool is_name(const char* n, size_t k = 0) const { return peek(k).type == Tok::kName && peek(k).text == n; }
  void expect_op(const char* op) {
    if (!is_op(op)) fail(std::string("expected '") + op + "', found '" + peek().text + "'");
    ++p_;
  }
  void expect(Tok type, const char* what) {
    if (peek().type != type) fail(std::string("expected ") + what + ", found '" + peek().text + "'");
    ++p_;
  }
  std::string expect_name() {
    if (peek().type != Tok::kName) fail("expected a name, found '" + peek().text + "'");
    return next().text;
  }
  NodePtr make(Node::Kind kind, int line) {
    auto n = std::make_shared<Node>();
    n->kind = kind;
    n->line = line;
    return n;
  }

  // Statements (jinja_parser.cc).
  // Statements until one of `ends` ({% end... %} etc.), which is left unconsumed.
  NodePtr block(const std::set<std::string>& ends);
  void close_stmt() { expect(Tok::kCloseStmt, "'%}'"); }
  // {% name %}, the end of a block statement.
  void end_tag(const char* name);
  NodePtr statement();
  NodePtr if_rest(int line);

  // Expressions (jinja_expression_parser.cc).
  // expression := or_expr ['if' or_expr ['else' expression]]
  NodePtr expression();
  NodePtr binary(const std::string& op, NodePtr l, NodePtr r, int line);
  NodePtr or_expr();
  NodePtr and_expr();
  NodePtr not_expr();
  NodePtr compare();
  NodePtr additive();
  NodePtr concat();
  NodePtr multiplicative();
  NodePtr power();
  NodePtr unary();
  void call_args(NodePtr& n);
  NodePtr postfix(NodePtr n);
  NodePtr filters(NodePtr n);
  NodePtr primary();

  std::vector<Token> t_;
  std::string where_;
  size_t p_ = 0;
};

}  // namespace realign::jinja
