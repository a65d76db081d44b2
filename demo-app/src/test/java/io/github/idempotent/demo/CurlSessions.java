package io.github.idempotent.demo;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.awaitility.core.ConditionTimeoutException;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The curl sessions of a doc, run against the demo and compared with what the doc shows:
 * status, each header it shows (and no other header but {@link #LEFT_OUT}), and the JSON
 * body. Values the server makes up ({@link #MADE_UP}) may differ from the doc's; the
 * first answer that has one binds it, and every later mention of the doc's value (in a
 * body, a header or a command, such as {@code bob-984943652}) must be that one. A shell
 * variable set on a line of its own ({@code $ BOB=984943652}) stands for its value in the
 * commands after it. A command that ends in {@code > file &} runs in the background,
 * {@code $ cat file} shows its answer; one that ends in {@code > /dev/null} shows none.
 */
final class CurlSessions {

	/**
	 * Headers every answer has that the docs leave out, as they say.
	 */
	static final List<String> LEFT_OUT = List.of("Date", "Transfer-Encoding", "Content-Length", "Keep-Alive",
			"Connection");

	/**
	 * JSON fields whose values the server makes up.
	 */
	static final Set<String> MADE_UP = Set.of("paymentId", "shipmentId", "id", "createdAt");

	static final Pattern FENCE = Pattern.compile("^\\s*```.*$");

	private static final JsonMapper json = JsonMapper.builder().build();

	private static final Pattern STATUS_LINE = Pattern.compile("^HTTP/1\\.1 (\\d{3})\\s*$");

	private static final Pattern BACKGROUND = Pattern.compile("^(.*?)\\s*>\\s*(\\S+)\\s*(&?)\\s*$");

	private static final Pattern VARIABLE = Pattern.compile("^\\$ ([A-Z_][A-Z0-9_]*)=(\\S+)\\s*$");

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private final Path document;

	private final int port;

	private final Map<String, CompletableFuture<Answer>> files = new LinkedHashMap<>();

	CurlSessions(Path document, int port) {
		this.document = document;
		this.port = port;
	}

	/**
	 * Runs the exchanges in order; {@code started} is told of each command sent in the
	 * background once it is sent.
	 * @return the differences, each block naming the doc's line
	 */
	List<String> run(List<Exchange> exchanges, Consumer<Curl> started) {
		Map<String, String> bound = new LinkedHashMap<>();
		List<String> differences = new ArrayList<>();
		for (Exchange exchange : exchanges) {
			String command = substitute(exchange.command(), bound);
			if (command.startsWith("cat ")) {
				CompletableFuture<Answer> answer = this.files.get(command.substring(4).trim());
				assertThat(answer).as(this.document + ":" + exchange.line() + " shows a file a command wrote")
					.isNotNull();
				differences.addAll(compare(exchange, answer.join(), bound));
				continue;
			}
			Matcher redirected = BACKGROUND.matcher(command);
			if (redirected.matches()) {
				Curl curl = Curl.parse(redirected.group(1));
				CompletableFuture<Answer> answer = redirected.group(3).isEmpty()
						? CompletableFuture.completedFuture(send(curl))
						: CompletableFuture.supplyAsync(() -> send(curl));
				this.files.put(redirected.group(2), answer);
				if (!redirected.group(3).isEmpty()) {
					started.accept(curl);
				}
				assertThat(exchange.body().isBlank() && exchange.status() == null)
					.as(this.document + ":" + exchange.line()
							+ " shows no answer for a command whose answer goes to a file")
					.isTrue();
				continue;
			}
			Curl curl = Curl.parse(command);
			List<String> found = compare(exchange, send(curl), bound);
			if (!found.isEmpty() && curl.method().equals("GET")) {
				// What the demo does after an answer (shipping) runs on a thread of its
				// own: a GET may show it a moment later.
				try {
					await().atMost(Duration.ofSeconds(10)).until(() -> compare(exchange, send(curl), bound).isEmpty());
					found = List.of();
				}
				catch (ConditionTimeoutException ex) {
					found = compare(exchange, send(curl), bound);
				}
			}
			differences.addAll(found);
		}
		return differences;
	}

	Answer send(Curl curl) {
		HttpRequest.Builder request = HttpRequest
			.newBuilder(URI.create(curl.url().replace("localhost:8080", "127.0.0.1:" + this.port)))
			.timeout(Duration.ofSeconds(30))
			.method(curl.method(), (curl.body() != null) ? HttpRequest.BodyPublishers.ofString(curl.body())
					: HttpRequest.BodyPublishers.noBody());
		curl.headers().forEach(request::header);
		try {
			HttpResponse<String> response = this.client.send(request.build(), HttpResponse.BodyHandlers.ofString());
			Map<String, String> headers = new LinkedHashMap<>();
			response.headers().map().forEach((name, values) -> headers.put(name, String.join(", ", values)));
			return new Answer(response.statusCode(), headers, response.body());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * The differences between what the doc shows and what the demo answered; the values
	 * it binds are added to {@code bound} only when there are none.
	 */
	private List<String> compare(Exchange exchange, Answer answer, Map<String, String> bound) {
		Map<String, String> binding = new LinkedHashMap<>(bound);
		List<String> differences = new ArrayList<>();
		String where = this.document + ":" + exchange.line() + " (" + exchange.command() + ")";
		if (exchange.status() != null && exchange.status() != answer.status()) {
			differences.add("status " + answer.status() + " where the doc shows " + exchange.status());
		}
		JsonNode documented = null;
		if (!exchange.body().isBlank()) {
			documented = json.readTree(substitute(exchange.body(), binding));
			JsonNode actual = json.readTree(answer.body());
			compare("", documented, actual, binding, differences);
		}
		if (exchange.status() != null) {
			Map<String, String> shown = new LinkedHashMap<>();
			exchange.headers().forEach((name, value) -> shown.put(name.toLowerCase(Locale.ROOT), value));
			answer.headers().forEach((name, value) -> {
				String expected = shown.remove(name.toLowerCase(Locale.ROOT));
				if (expected != null && !substitute(expected, binding).equals(value)) {
					differences.add("header " + name + ": " + value + " where the doc shows " + expected);
				}
				else if (expected == null && LEFT_OUT.stream().noneMatch(name::equalsIgnoreCase)) {
					differences.add("header " + name + ": " + value + " that the doc does not show");
				}
			});
			shown.forEach((name, value) -> differences.add("no header " + name + " where the doc shows " + value));
		}
		if (!differences.isEmpty()) {
			differences.add(0, where);
			differences.add("the demo answered:\n" + answer.asCurlShowsIt(exchange.status() != null));
			return differences;
		}
		bound.putAll(binding);
		return differences;
	}

	private static void compare(String path, JsonNode documented, JsonNode actual, Map<String, String> binding,
			List<String> differences) {
		if (documented.isObject() && actual.isObject()) {
			Set<String> names = new TreeSet<>(documented.propertyNames());
			names.addAll(actual.propertyNames());
			for (String name : names) {
				JsonNode expected = documented.get(name);
				JsonNode value = actual.get(name);
				if (expected == null || value == null) {
					differences.add(path + "/" + name + ": " + ((expected == null) ? "not in the doc" : "not sent"));
				}
				else if (MADE_UP.contains(name) && expected.isValueNode() && value.isValueNode()) {
					bind(path + "/" + name, expected.asString(), value.asString(), binding, differences);
				}
				else {
					compare(path + "/" + name, expected, value, binding, differences);
				}
			}
		}
		else if (documented.isArray() && actual.isArray() && documented.size() == actual.size()) {
			for (int i = 0; i < documented.size(); i++) {
				compare(path + "/" + i, documented.get(i), actual.get(i), binding, differences);
			}
		}
		else if (documented.isString() && actual.isString()) {
			if (!substitute(documented.asString(), binding).equals(actual.asString())) {
				differences.add(path + ": " + actual + " where the doc shows " + documented);
			}
		}
		else if (!documented.equals(actual)) {
			differences.add(path + ": " + actual + " where the doc shows " + documented);
		}
	}

	private static void bind(String path, String documented, String actual, Map<String, String> binding,
			List<String> differences) {
		String known = binding.get(documented);
		if (known == null && !binding.containsValue(actual)) {
			binding.put(documented, actual);
		}
		else if (!actual.equals((known != null) ? known : documented)) {
			differences.add(path + ": " + actual + " where the doc shows " + documented
					+ ((known != null) ? " (" + known + " in this run)" : ""));
		}
	}

	static String substitute(String text, Map<String, String> binding) {
		String result = text;
		List<String> longestFirst = new ArrayList<>(binding.keySet());
		longestFirst.sort((a, b) -> b.length() - a.length());
		for (String documented : longestFirst) {
			if (!documented.equals(binding.get(documented))) {
				result = result.replace(documented, binding.get(documented));
			}
		}
		return result;
	}

	/**
	 * The exchanges of a part of the doc: a {@code $ curl} or {@code $ cat} command
	 * (continued by a trailing backslash) in a fenced block, and what follows it up to
	 * the next command, comment or the end of the block.
	 */
	static List<Exchange> exchanges(Path document, List<String> lines) {
		List<Exchange> exchanges = new ArrayList<>();
		Map<String, String> variables = new LinkedHashMap<>();
		boolean fenced = false;
		for (int i = 0; i < lines.size(); i++) {
			String line = lines.get(i);
			if (FENCE.matcher(line).matches()) {
				fenced = !fenced;
				continue;
			}
			Matcher variable = VARIABLE.matcher(line);
			if (fenced && variable.matches()) {
				variables.put("$" + variable.group(1), variable.group(2));
				continue;
			}
			if (!fenced || !(line.startsWith("$ curl ") || line.startsWith("$ cat "))) {
				assertThat(!fenced || !STATUS_LINE.matcher(line).matches())
					.as(document + ":" + (i + 1)
							+ ": an answer shows the command that got it (a line starting with \"$ curl\")")
					.isTrue();
				continue;
			}
			int first = i;
			StringBuilder command = new StringBuilder(line.substring(2));
			while (command.toString().endsWith("\\") && i + 1 < lines.size()) {
				command.setLength(command.length() - 1);
				command.append(' ').append(lines.get(++i).trim());
			}
			List<String> output = new ArrayList<>();
			while (i + 1 < lines.size() && !lines.get(i + 1).startsWith("$ ") && !lines.get(i + 1).startsWith("# ")
					&& !FENCE.matcher(lines.get(i + 1)).matches()) {
				output.add(lines.get(++i));
			}
			exchanges.add(Exchange.parse(first + 1, substitute(command.toString(), variables), output));
		}
		return exchanges;
	}

	record Exchange(int line, String command, @Nullable Integer status, Map<String, String> headers, String body) {

		static Exchange parse(int line, String command, List<String> output) {
			List<String> rest = new ArrayList<>(output);
			while (!rest.isEmpty() && rest.get(0).isBlank()) {
				rest.remove(0);
			}
			Integer status = null;
			Map<String, String> headers = new LinkedHashMap<>();
			Matcher statusLine = rest.isEmpty() ? null : STATUS_LINE.matcher(rest.get(0));
			if (statusLine != null && statusLine.matches()) {
				status = Integer.valueOf(statusLine.group(1));
				rest.remove(0);
				while (!rest.isEmpty() && !rest.get(0).isBlank()) {
					String header = rest.remove(0);
					headers.put(header.substring(0, header.indexOf(':')).trim(),
							header.substring(header.indexOf(':') + 1).trim());
				}
			}
			return new Exchange(line, command, status, headers, String.join("\n", rest).trim());
		}

	}

	record Answer(int status, Map<String, String> headers, String body) {

		String asCurlShowsIt(boolean withHeaders) {
			StringBuilder text = new StringBuilder();
			if (withHeaders) {
				text.append("HTTP/1.1 ").append(this.status).append('\n');
				this.headers.forEach((name, value) -> text.append(name).append(": ").append(value).append('\n'));
				text.append('\n');
			}
			return text.append(this.body).toString();
		}

	}

	/**
	 * The part of curl's command line that the doc uses.
	 */
	record Curl(String method, String url, Map<String, String> headers, String body) {

		static Curl parse(String command) {
			List<String> words = words(command);
			assertThat(words.get(0)).isEqualTo("curl");
			String method = null;
			String url = null;
			String body = null;
			Map<String, String> headers = new LinkedHashMap<>();
			for (int i = 1; i < words.size(); i++) {
				String word = words.get(i);
				switch (word) {
					case "-s", "-i", "-si", "-is" -> {
					}
					case "-X" -> method = words.get(++i);
					case "-H" -> {
						String header = words.get(++i);
						headers.put(header.substring(0, header.indexOf(':')).trim(),
								header.substring(header.indexOf(':') + 1).trim());
					}
					case "-d" -> body = words.get(++i);
					default -> {
						assertThat(word).as("a curl option the test knows, in " + command).doesNotStartWith("-");
						url = word.startsWith("http") ? word : "http://" + word;
					}
				}
			}
			assertThat(url).as("the URL of " + command).isNotNull();
			return new Curl((method != null) ? method : ((body != null) ? "POST" : "GET"), url, headers, body);
		}

		/**
		 * The words of a shell command: quotes removed, and the one command substitution
		 * the doc uses, {@code $(cat /proc/sys/kernel/random/uuid)}, made.
		 */
		private static List<String> words(String command) {
			List<String> words = new ArrayList<>();
			StringBuilder word = null;
			for (int i = 0; i < command.length(); i++) {
				char c = command.charAt(i);
				if (Character.isWhitespace(c)) {
					if (word != null) {
						words.add(word.toString());
						word = null;
					}
					continue;
				}
				word = (word != null) ? word : new StringBuilder();
				if (c == '\'') {
					int end = command.indexOf('\'', i + 1);
					word.append(command, i + 1, end);
					i = end;
				}
				else if (c == '"') {
					int end = command.indexOf('"', i + 1);
					word.append(command.substring(i + 1, end)
						.replace("$(cat /proc/sys/kernel/random/uuid)", UUID.randomUUID().toString()));
					i = end;
				}
				else {
					word.append(c);
				}
			}
			if (word != null) {
				words.add(word.toString());
			}
			return words;
		}

	}

}
