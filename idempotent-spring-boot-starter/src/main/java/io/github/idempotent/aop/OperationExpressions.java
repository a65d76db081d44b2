package io.github.idempotent.aop;

import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import org.springframework.core.NativeDetector;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelCompilerMode;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.SpelParserConfiguration;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.StringUtils;

/**
 * Parses {@code @Idempotent}'s expressions at start-up.
 */
final class OperationExpressions {

	// A native image cannot define the classes the SpEL compiler generates.
	private final SpelExpressionParser parser = new SpelExpressionParser(
			new SpelParserConfiguration(NativeDetector.inNativeImage() ? SpelCompilerMode.OFF : SpelCompilerMode.MIXED,
					IdempotentOperationSource.class.getClassLoader()));

	private static final Pattern POSITIONAL = Pattern.compile("[ap]\\d+");

	@Nullable Expression parse(String where, String attribute, String text) {
		if (!StringUtils.hasText(text)) {
			return null;
		}
		try {
			return this.parser.parseExpression(text);
		}
		catch (ParseException ex) {
			throw new IllegalStateException("@Idempotent on " + where + ": " + attribute + " expression '" + text
					+ "' does not parse: " + ex.getMessage() + ". Refer to arguments by name (#request.orderNo) "
					+ "or position (#p0)", ex);
		}
	}

	// Without names #request is null on every call: a 400, or no protection at all.
	static void checkNoParameterNames(String where, String attribute, @Nullable Expression expression) {
		if (expression instanceof SpelExpression spel) {
			String name = namedVariable(spel.getAST());
			if (name != null) {
				throw new IllegalStateException("@Idempotent on " + where + ": " + attribute + " expression '"
						+ expression.getExpressionString() + "' refers to the parameter #" + name
						+ ", but the class was compiled without parameter names. Compile with -parameters "
						+ "(maven-compiler-plugin <parameters>true</parameters>, as Spring Boot's parent POM does) "
						+ "or refer to the argument by position: #p0, #a0");
			}
		}
	}

	private static @Nullable String namedVariable(SpelNode node) {
		if (node instanceof VariableReference) {
			String name = node.toStringAST().substring(1);
			if (!POSITIONAL.matcher(name).matches() && !name.equals("root") && !name.equals("this")) {
				return name;
			}
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			String name = namedVariable(node.getChild(i));
			if (name != null) {
				return name;
			}
		}
		return null;
	}

}
