#include "jinja/parser.h"

namespace realign::jinja {

NodePtr Parser::block(const std::set<std::string>& ends) {
  NodePtr b = make(Node::Kind::kBlock, peek().line);
  for (;;) {
    const Token& tok = peek();
    if (tok.type == Tok::kEnd) {
      for (const std::string& end : ends)
        if (end.rfind("end", 0) == 0) fail("missing {% " + end + " %}");
      return b;
    }
    if (tok.type == Tok::kText) {
      NodePtr n = make(Node::Kind::kText, tok.line);
      n->text = tok.text;
      b->children.push_back(n);
      ++p_;
    } else if (tok.type == Tok::kOpenExpr) {
      ++p_;
      NodePtr n = make(Node::Kind::kOutput, tok.line);
      n->a = expression();
      expect(Tok::kCloseExpr, "'}}'");
      b->children.push_back(n);
    } else if (tok.type == Tok::kOpenStmt) {
      if (peek(1).type == Tok::kName && ends.count(peek(1).text)) return b;
      ++p_;
      if (NodePtr s = statement()) b->children.push_back(s);
    } else {
      fail("unexpected '" + tok.text + "'");
    }
  }
}

void Parser::end_tag(const char* name) {
  expect(Tok::kOpenStmt, "'{%'");
  if (!is_name(name)) fail(std::string("expected {% ") + name + " %}");
  ++p_;
  close_stmt();
}

NodePtr Parser::statement() {
  const int line = peek().line;
  const std::string kw = expect_name();
  if (kw == "if") return if_rest(line);
  if (kw == "for") {
    NodePtr n = make(Node::Kind::kFor, line);
    n->names.push_back(expect_name());
    while (is_op(",")) {
      ++p_;
      n->names.push_back(expect_name());
    }
    if (!is_name("in")) fail("expected 'in' in a for loop");
    ++p_;
    n->a = or_expr();  // a conditional here would swallow the loop's `if`
    if (is_name("if")) {
      ++p_;
      n->b = expression();
    }
    close_stmt();
    n->children.push_back(block({"endfor", "else"}));
    n->children.push_back(nullptr);
    if (is_name("else", 1)) {
      p_ += 2;
      close_stmt();
      n->children[1] = block({"endfor"});
    }
    end_tag("endfor");
    return n;
  }
  if (kw == "set") {
    NodePtr n = make(Node::Kind::kSet, line);
    const std::string first = expect_name();
    if (is_op(".")) {
      ++p_;
      NodePtr target = make(Node::Kind::kAttr, line);
      target->a = make(Node::Kind::kName, line);
      target->a->text = first;
      target->text = expect_name();
      n->a = target;
    } else {
      n->names.push_back(first);
      while (is_op(",")) {
        ++p_;
        n->names.push_back(expect_name());
      }
    }
    if (is_op("=")) {
      ++p_;
      n->b = expression();
      close_stmt();
    } else {
      close_stmt();
      n->children.push_back(block({"endset"}));
      end_tag("endset");
    }
    return n;
  }
  if (kw == "break" || kw == "continue") {
    close_stmt();
    return make(kw == "break" ? Node::Kind::kBreak : Node::Kind::kContinue, line);
  }
  if (kw == "generation" || kw == "endgeneration") {  // transformers' assistant-mask markers: no output
    close_stmt();
    return nullptr;
  }
  throw Error(where_ + ":" + std::to_string(line),
              "'{% " + kw + " %}' is not supported (supported: if, for, set, break, continue)");
}

NodePtr Parser::if_rest(int line) {
  NodePtr n = make(Node::Kind::kIf, line);
  n->a = expression();
  close_stmt();
  n->children.push_back(block({"elif", "else", "endif"}));
  n->children.push_back(nullptr);
  if (is_name("elif", 1)) {
    p_ += 2;
    NodePtr inner = make(Node::Kind::kBlock, peek().line);
    inner->children.push_back(if_rest(peek().line));  // consumes the shared endif
    n->children[1] = inner;
    return n;
  }
  if (is_name("else", 1)) {
    p_ += 2;
    close_stmt();
    n->children[1] = block({"endif"});
  }
  end_tag("endif");
  return n;
}

NodePtr parse_template(const std::string& source, const std::string& where) {
  return Parser(lex_template(source, where), where).parse_all();
}

}  // namespace realign::jinja
