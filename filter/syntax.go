package filter

import (
	"github.com/antlr/antlr4/runtime/Go/antlr"
	"github.com/cloudevents/sdk-go/sql/v2/gen"
	cesqlparser "github.com/cloudevents/sdk-go/sql/v2/parser"
)

// checkSyntax runs the CESQL grammar over rewritten (expr with its data paths renamed,
// same length, so positions carry over) with listeners that keep the first error's
// position. It is the SDK parser's own lexer and grammar; only the listeners differ.
func checkSyntax(expr, rewritten string) error {
	l := &firstError{}
	lexer := gen.NewCESQLParserLexer(cesqlparser.NewCaseChangingStream(antlr.NewInputStream(rewritten), true))
	lexer.RemoveErrorListeners()
	lexer.AddErrorListener(l)
	p := gen.NewCESQLParserParser(antlr.NewCommonTokenStream(lexer, antlr.TokenDefaultChannel))
	p.RemoveErrorListeners()
	p.AddErrorListener(l)
	p.Cesql()
	if l.err != nil {
		l.err.Expr = expr
		return l.err
	}
	return nil
}

// firstError keeps the first syntax error of a parse (the later ones are usually its
// consequences).
type firstError struct {
	antlr.DefaultErrorListener
	err *Error
}

func (f *firstError) SyntaxError(_ antlr.Recognizer, _ any, line, column int, msg string, _ antlr.RecognitionException) {
	if f.err == nil {
		f.err = &Error{Line: line, Col: column + 1, Msg: msg}
	}
}
