// The parser of the chat-template subset of Jinja: the lexer's tokens (jinja_lexer.h) into the Node tree
// (jinja_ast.h), statements by recursive descent and expressions by precedence.
#include <set>

#include "core/error.h"
#include "io/jinja_ast.h"
#include "io/jinja_lexer.h"

namespace realign::io::jinja {
namespace {

class Parser {
 public:
  Parser(std::vector<Token> tokens, const std::string& where) : t_(std::move(tokens)), where_(where) {}

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

  // Statements until one of `ends` ({% end... %} etc.), which is left unconsumed.
  NodePtr block(const std::set<std::string>& ends) {
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

  void close_stmt() { expect(Tok::kCloseStmt, "'%}'"); }
  void end_tag(const char* name) {
    expect(Tok::kOpenStmt, "'{%'");
    if (!is_name(name)) fail(std::string("expected {% ") + name + " %}");
    ++p_;
    close_stmt();
  }

  NodePtr statement() {
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

  NodePtr if_rest(int line) {
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

  // expression := or_expr ['if' or_expr ['else' expression]]
  NodePtr expression() {
    NodePtr value = or_expr();
    if (is_name("if")) {
      NodePtr n = make(Node::Kind::kConditional, peek().line);
      ++p_;
      n->b = value;
      n->a = or_expr();
      n->children.push_back(nullptr);
      if (is_name("else")) {
        ++p_;
        n->children[0] = expression();
      }
      return n;
    }
    return value;
  }
  NodePtr binary(const std::string& op, NodePtr l, NodePtr r, int line) {
    NodePtr n = make(Node::Kind::kBinary, line);
    n->text = op;
    n->a = std::move(l);
    n->b = std::move(r);
    return n;
  }
  NodePtr or_expr() {
    NodePtr l = and_expr();
    while (is_name("or")) {
      const int line = next().line;
      l = binary("or", l, and_expr(), line);
    }
    return l;
  }
  NodePtr and_expr() {
    NodePtr l = not_expr();
    while (is_name("and")) {
      const int line = next().line;
      l = binary("and", l, not_expr(), line);
    }
    return l;
  }
  NodePtr not_expr() {
    if (is_name("not")) {
      NodePtr n = make(Node::Kind::kUnary, next().line);
      n->text = "not";
      n->a = not_expr();
      return n;
    }
    return compare();
  }
  NodePtr compare() {
    NodePtr l = additive();
    for (;;) {
      const int line = peek().line;
      if (peek().type == Tok::kOp && (peek().text == "==" || peek().text == "!=" || peek().text == "<" ||
                                      peek().text == ">" || peek().text == "<=" || peek().text == ">=")) {
        const std::string op = next().text;
        l = binary(op, l, additive(), line);
      } else if (is_name("in")) {
        ++p_;
        l = binary("in", l, additive(), line);
      } else if (is_name("not") && is_name("in", 1)) {
        p_ += 2;
        l = binary("not in", l, additive(), line);
      } else {
        return l;
      }
    }
  }
  NodePtr additive() {
    NodePtr l = concat();
    while (is_op("+") || is_op("-")) {
      const Token& op = next();
      l = binary(op.text, l, concat(), op.line);
    }
    return l;
  }
  NodePtr concat() {
    NodePtr l = multiplicative();
    while (is_op("~")) {
      const int line = next().line;
      l = binary("~", l, multiplicative(), line);
    }
    return l;
  }
  NodePtr multiplicative() {
    NodePtr l = power();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& op = next();
      l = binary(op.text, l, power(), op.line);
    }
    return l;
  }
  NodePtr power() {
    NodePtr l = unary();
    while (is_op("**")) {
      const int line = next().line;
      l = binary("**", l, unary(), line);
    }
    return l;
  }
  NodePtr unary() {
    if (is_op("-") || is_op("+")) {
      NodePtr n = make(Node::Kind::kUnary, peek().line);
      n->text = next().text;
      n->a = unary();
      return n;
    }
    return filters(postfix(primary()));
  }

  void call_args(NodePtr& n) {
    expect_op("(");
    while (!is_op(")")) {
      if (peek().type == Tok::kName && is_op("=", 1)) {
        n->names.push_back(next().text);
        ++p_;
      } else {
        n->names.emplace_back();
      }
      n->children.push_back(expression());
      if (!is_op(")")) expect_op(",");
    }
    ++p_;
  }

  NodePtr postfix(NodePtr n) {
    for (;;) {
      const int line = peek().line;
      if (is_op(".")) {
        ++p_;
        NodePtr a = make(Node::Kind::kAttr, line);
        a->a = n;
        if (peek().type == Tok::kNumber)
          a->text = next().text;  // x.0
        else
          a->text = expect_name();
        n = a;
      } else if (is_op("[")) {
        ++p_;
        NodePtr parts[3];
        int k = 0;
        bool slice = false;
        for (;;) {
          if (is_op("]")) break;
          if (is_op(":")) {
            slice = true;
            if (++k > 2) fail("a slice has at most three parts");
            ++p_;
            continue;
          }
          parts[k] = expression();
        }
        expect_op("]");
        NodePtr s = make(slice ? Node::Kind::kSlice : Node::Kind::kIndex, line);
        s->a = n;
        if (slice)
          s->children = {parts[0], parts[1], parts[2]};
        else if (!parts[0])
          fail("empty subscript []");
        else
          s->b = parts[0];
        n = s;
      } else if (is_op("(")) {
        NodePtr c = make(Node::Kind::kCall, line);
        c->a = n;
        call_args(c);
        n = c;
      } else {
        return n;
      }
    }
  }

  NodePtr filters(NodePtr n) {
    for (;;) {
      const int line = peek().line;
      if (is_op("|")) {
        ++p_;
        NodePtr f = make(Node::Kind::kFilter, line);
        f->a = n;
        f->text = expect_name();
        if (is_op("(")) call_args(f);
        n = f;
      } else if (is_name("is")) {
        ++p_;
        NodePtr t = make(Node::Kind::kTest, line);
        t->a = n;
        if (is_name("not")) {
          ++p_;
          t->negate = true;
        }
        t->text = expect_name();
        if (is_op("(")) call_args(t);
        n = t;
      } else {
        return n;
      }
    }
  }

  NodePtr primary() {
    const Token& tok = peek();
    NodePtr n;
    if (tok.type == Tok::kString) {
      n = make(Node::Kind::kLiteral, tok.line);
      std::string s;
      while (peek().type == Tok::kString) s += next().text;  // adjacent literals concatenate
      n->value = Value::string(s);
      return n;
    }
    if (tok.type == Tok::kNumber) {
      n = make(Node::Kind::kLiteral, tok.line);
      n->value = tok.is_float ? Value::real(std::stod(tok.text)) : Value::integer(std::stoll(tok.text));
      ++p_;
      return n;
    }
    if (tok.type == Tok::kName) {
      ++p_;
      n = make(Node::Kind::kLiteral, tok.line);
      if (tok.text == "true" || tok.text == "True")
        n->value = Value::boolean(true);
      else if (tok.text == "false" || tok.text == "False")
        n->value = Value::boolean(false);
      else if (tok.text == "none" || tok.text == "None")
        n->value = Value::none();
      else {
        n->kind = Node::Kind::kName;
        n->text = tok.text;
      }
      return n;
    }
    if (is_op("(")) {
      ++p_;
      NodePtr first = expression();
      if (is_op(")")) {
        ++p_;
        return first;
      }
      n = make(Node::Kind::kTuple, tok.line);
      n->children.push_back(first);
      while (is_op(",")) {
        ++p_;
        if (is_op(")")) break;
        n->children.push_back(expression());
      }
      expect_op(")");
      return n;
    }
    if (is_op("[")) {
      ++p_;
      n = make(Node::Kind::kList, tok.line);
      while (!is_op("]")) {
        n->children.push_back(expression());
        if (!is_op("]")) expect_op(",");
      }
      ++p_;
      return n;
    }
    if (is_op("{")) {
      ++p_;
      n = make(Node::Kind::kDict, tok.line);
      while (!is_op("}")) {
        n->children.push_back(expression());
        expect_op(":");
        n->children.push_back(expression());
        if (!is_op("}")) expect_op(",");
      }
      ++p_;
      return n;
    }
    fail("expected an expression, found '" + tok.text + "'");
  }

  std::vector<Token> t_;
  std::string where_;
  size_t p_ = 0;
};

}  // namespace

NodePtr parse_template(const std::string& source, const std::string& where) {
  return Parser(lex_template(source, where), where).parse_all();
}

}  // namespace realign::io::jinja
