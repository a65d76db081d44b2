import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.sun.jdi.Bootstrap;
import com.sun.jdi.Method;
import com.sun.jdi.ThreadReference;
import com.sun.jdi.VirtualMachine;
import com.sun.jdi.connect.AttachingConnector;
import com.sun.jdi.connect.Connector;
import com.sun.jdi.event.Event;
import com.sun.jdi.event.EventSet;
import com.sun.jdi.event.MethodEntryEvent;
import com.sun.jdi.event.MethodExitEvent;
import com.sun.jdi.event.VMDisconnectEvent;
import com.sun.jdi.request.EventRequest;
import com.sun.jdi.request.EventRequestManager;
import com.sun.jdi.request.MethodEntryRequest;
import com.sun.jdi.request.MethodExitRequest;

/**
 * Which of the starter's classes one call passes through, in order: attaches to a JVM started
 * with JDWP, and for each phase turns on method entry and exit events of the classes under
 * {@code --prefix}, runs the phase's shell command (one curl), waits {@code --settle-ms} for
 * work the call left on other threads, turns the events off and reports.
 * <p>
 * Run with the JDK's single-file launcher, from benchmarks/trace-call-path.sh: <pre>
 * java CallPathTracer.java --port 5005 --out DIR [--prefix io.github.idempotent.]
 *     [--app-prefix io.github.idempotent.demo.] [--settle-ms 1500] NAME=COMMAND...
 * </pre> Writes DIR/NAME.events.tsv (every entry, per thread, with its depth and traced caller)
 * and DIR/NAME.md, the report, which it also prints.
 * <p>
 * Each thread keeps a stack of the traced frames (entries push, exits, exceptional ones
 * included, pop), so every entry knows its nearest traced caller and whether code of the
 * application ({@code --app-prefix}, generated proxies and lambdas left out) is beneath it. The
 * report splits each thread's starter entries into the path around the application (nothing of
 * the application beneath: the framing of the call) and calls under the application's code (the
 * application calling the starter, a nested {@code @Idempotent} call), and lists the
 * application's own classes apart.
 */
public class CallPathTracer {

	record Call(long seq, long thread, String threadName, int depth, String type, String method, int caller,
			boolean underApp, List<String> stackPackages) {
	}

	record Frame(Method method, int index) {
	}

	static String prefix = "io.github.idempotent.";

	static String appPrefix = "io.github.idempotent.demo.";

	/** Thread and method of every entry of the phases named idle*: what runs with no request. */
	static final java.util.Set<String> background = new java.util.HashSet<>();

	static String backgroundKey(Call call) {
		return call.threadName() + "|" + lambda(call.type()) + "." + call.method();
	}

	public static void main(String[] args) throws Exception {
		int port = 0;
		String host = "127.0.0.1";
		Path out = null;
		long settleMs = 1500;
		Map<String, String> phases = new LinkedHashMap<>();
		for (int i = 0; i < args.length; i++) {
			switch (args[i]) {
				case "--port" -> port = Integer.parseInt(args[++i]);
				case "--host" -> host = args[++i];
				case "--out" -> out = Path.of(args[++i]);
				case "--prefix" -> prefix = args[++i];
				case "--app-prefix" -> appPrefix = args[++i];
				case "--settle-ms" -> settleMs = Long.parseLong(args[++i]);
				default -> {
					int eq = args[i].indexOf('=');
					if (eq <= 0) {
						throw new IllegalArgumentException("expected NAME=COMMAND, got " + args[i]);
					}
					phases.put(args[i].substring(0, eq), args[i].substring(eq + 1));
				}
			}
		}
		if (port == 0 || out == null || phases.isEmpty()) {
			System.err.println("usage: java CallPathTracer.java --port N --out DIR [--prefix P] [--app-prefix A]"
					+ " [--settle-ms MS] NAME=COMMAND...");
			System.exit(2);
		}
		Files.createDirectories(out);
		VirtualMachine vm = attach(host, port);
		try {
			for (Map.Entry<String, String> phase : phases.entrySet()) {
				List<Call> calls = trace(vm, phase.getValue(), settleMs, out.resolve(phase.getKey() + ".response"));
				writeEvents(calls, out.resolve(phase.getKey() + ".events.tsv"));
				if (phase.getKey().startsWith("idle")) {
					calls.forEach((call) -> background.add(backgroundKey(call)));
				}
				String report = report(phase.getKey(), phase.getValue(), calls,
						Files.readString(out.resolve(phase.getKey() + ".response")));
				Files.writeString(out.resolve(phase.getKey() + ".md"), report);
				System.out.println(report);
			}
		}
		finally {
			vm.dispose();
		}
	}

	static VirtualMachine attach(String host, int port) throws Exception {
		AttachingConnector connector = Bootstrap.virtualMachineManager()
			.attachingConnectors()
			.stream()
			.filter((c) -> c.name().equals("com.sun.jdi.SocketAttach"))
			.findFirst()
			.orElseThrow();
		Map<String, Connector.Argument> arguments = connector.defaultArguments();
		arguments.get("hostname").setValue(host);
		arguments.get("port").setValue(Integer.toString(port));
		return connector.attach(arguments);
	}

	/** Events of one phase, as the application's threads saw them, in arrival order. */
	static List<Call> trace(VirtualMachine vm, String command, long settleMs, Path response) throws Exception {
		EventRequestManager requests = vm.eventRequestManager();
		MethodEntryRequest entries = requests.createMethodEntryRequest();
		MethodExitRequest exits = requests.createMethodExitRequest();
		for (EventRequest request : List.of(entries, exits)) {
			request.setSuspendPolicy(EventRequest.SUSPEND_NONE);
		}
		entries.addClassFilter(prefix + "*");
		exits.addClassFilter(prefix + "*");
		List<Event> events = new ArrayList<>();
		Thread collector = new Thread(() -> {
			try {
				while (!Thread.currentThread().isInterrupted()) {
					EventSet set = vm.eventQueue().remove(100);
					if (set == null) {
						continue;
					}
					synchronized (events) {
						for (Event event : set) {
							if (event instanceof VMDisconnectEvent) {
								return;
							}
							events.add(event);
						}
					}
				}
			}
			catch (InterruptedException ex) {
				// stopped
			}
		}, "collector");
		collector.start();
		entries.enable();
		exits.enable();
		Process process = new ProcessBuilder("bash", "-c", command).redirectOutput(response.toFile())
			.redirectError(ProcessBuilder.Redirect.INHERIT)
			.start();
		int status = process.waitFor();
		Thread.sleep(settleMs);
		entries.disable();
		exits.disable();
		requests.deleteEventRequests(List.of(entries, exits));
		// Events sent before the requests were cleared: the queue stays quiet for a second.
		int size;
		do {
			synchronized (events) {
				size = events.size();
			}
			Thread.sleep(1000);
		}
		while (size != events.size());
		collector.interrupt();
		collector.join();
		if (status != 0) {
			throw new IOException("the command exited with " + status + ": " + command);
		}
		return calls(events);
	}

	static List<Call> calls(List<Event> events) {
		Map<Long, Deque<Frame>> stacks = new HashMap<>();
		Map<Long, String> names = new HashMap<>();
		List<Call> calls = new ArrayList<>();
		long seq = 0;
		for (Event event : events) {
			ThreadReference thread;
			Method method;
			if (event instanceof MethodEntryEvent entry) {
				thread = entry.thread();
				method = entry.method();
			}
			else if (event instanceof MethodExitEvent exit) {
				thread = exit.thread();
				method = exit.method();
			}
			else {
				continue;
			}
			long id = thread.uniqueID();
			String name = names.computeIfAbsent(id, (key) -> {
				try {
					return thread.name();
				}
				catch (RuntimeException ex) {
					return "thread-" + key;
				}
			});
			Deque<Frame> stack = stacks.computeIfAbsent(id, (key) -> new ArrayDeque<>());
			if (event instanceof MethodEntryEvent) {
				int caller = stack.isEmpty() ? -1 : stack.peek().index();
				boolean underApp = false;
				List<String> stackPackages = new ArrayList<>();
				for (Frame frame : stack) {
					String type = frame.method().declaringType().name();
					underApp |= isApp(type);
					stackPackages.add(0, packageOf(type));
				}
				calls.add(new Call(seq++, id, name, stack.size(), method.declaringType().name(), method.name(), caller,
						underApp, stackPackages));
				stack.push(new Frame(method, calls.size() - 1));
			}
			else if (stack.stream().anyMatch((frame) -> frame.method().equals(method))) {
				// An exit pops its frame (and any whose exit was lost); one of a frame entered
				// before the phase began matches none.
				while (!stack.pop().method().equals(method)) {
				}
			}
		}
		return calls;
	}

	static boolean isApp(String type) {
		return type.startsWith(appPrefix) && !type.contains("$$");
	}

	static boolean isStarter(String type) {
		return type.startsWith(prefix) && !type.startsWith(appPrefix);
	}

	/** The class a nested, anonymous or lambda class belongs to. */
	static String topLevel(String type) {
		int dollar = type.indexOf('$');
		return dollar < 0 ? type : type.substring(0, dollar);
	}

	/** The package relative to the prefix: core, web, store.redis. */
	static String packageOf(String type) {
		String name = type.startsWith(prefix) ? type.substring(prefix.length()) : type;
		int dot = topLevel(name).lastIndexOf('.');
		return dot < 0 ? "" : name.substring(0, dot);
	}

	/** Relative to the prefix, a lambda's run-dependent number and address left out. */
	static String shortName(String type) {
		return lambda(type.startsWith(prefix) ? type.substring(prefix.length()) : type);
	}

	static String lambda(String name) {
		return name.replaceAll("\\$\\$Lambda(\\$\\d+)?/0x[0-9a-f]+", "\\$\\$Lambda");
	}

	static void writeEvents(List<Call> calls, Path file) throws IOException {
		try (PrintWriter writer = new PrintWriter(Files.newBufferedWriter(file))) {
			writer.println("seq\tthread\tdepth\tcaller_seq\tunder_app\tclass\tmethod");
			for (Call call : calls) {
				writer.println(call.seq() + "\t" + call.threadName() + "\t" + call.depth() + "\t"
						+ (call.caller() < 0 ? "-" : calls.get(call.caller()).seq()) + "\t" + call.underApp() + "\t"
						+ shortName(call.type()) + "\t" + call.method());
			}
		}
	}

	static String report(String phase, String command, List<Call> calls, String response) {
		StringBuilder out = new StringBuilder();
		String status = response.lines().findFirst().orElse("(no response)").strip();
		out.append("## ").append(phase).append("\n\n");
		out.append("Command: `").append(command).append("`  \nResponse: ").append(status);
		response.lines()
			.filter((line) -> line.toLowerCase().startsWith("idempotent-replayed"))
			.forEach((line) -> out.append(", ").append(line.strip()));
		out.append("\n\n");
		Map<Long, List<Call>> byThread = new LinkedHashMap<>();
		for (Call call : calls) {
			byThread.computeIfAbsent(call.thread(), (id) -> new ArrayList<>()).add(call);
		}
		StringBuilder summary = new StringBuilder();
		summary.append("| thread | part | classes | counting nested apart | method entries | package changes |"
				+ " calls back into a package on the stack | entries also seen with no request (idle) |\n"
				+ "|---|---|---:|---:|---:|---:|---:|---:|\n");
		StringBuilder details = new StringBuilder();
		for (List<Call> threadCalls : byThread.values()) {
			String thread = threadCalls.get(0).threadName();
			List<Call> around = threadCalls.stream()
				.filter((call) -> isStarter(call.type()) && !call.underApp())
				.toList();
			List<Call> under = threadCalls.stream().filter((call) -> isStarter(call.type()) && call.underApp()).toList();
			List<Call> app = threadCalls.stream().filter((call) -> !isStarter(call.type())).toList();
			details.append("### Thread `").append(thread).append("`: ").append(threadCalls.size())
				.append(" method entries\n\n");
			if (!around.isEmpty()) {
				String part = "the starter around the application (no application code beneath)";
				summary.append("| ").append(thread).append(" | around the application | ")
					.append(section(details, part, around, calls)).append(" | ").append(idle(around)).append(" |\n");
			}
			if (!under.isEmpty()) {
				String part = "the starter called from the application's code";
				summary.append("| ").append(thread).append(" | called from the application | ")
					.append(section(details, part, under, calls)).append(" | ").append(idle(under)).append(" |\n");
			}
			if (!app.isEmpty()) {
				details.append("The application's classes (").append(appPrefix).append("*, proxies included): ")
					.append(String.join(", ", distinct(app).keySet().stream().map(CallPathTracer::shortName).toList()))
					.append("\n\nCalls from the starter into the application: ");
				Map<String, Integer> into = new LinkedHashMap<>();
				for (Call call : app) {
					Call caller = call.caller() < 0 ? null : calls.get(call.caller());
					if (caller != null && isStarter(caller.type())) {
						into.merge(shortName(caller.type()) + "." + caller.method() + " -> " + shortName(call.type()) + "."
								+ call.method(), 1, Integer::sum);
					}
				}
				details.append(into.isEmpty() ? "none" : into.toString()).append("\n\n");
			}
		}
		Map<String, List<Call>> all = distinct(calls.stream().filter((call) -> isStarter(call.type())).toList());
		out.append("The starter's classes entered on all threads: ").append(all.size())
			.append(" (top-level), ")
			.append(calls.stream().filter((call) -> isStarter(call.type())).map(Call::type).distinct().count())
			.append(" counting nested, anonymous and lambda classes apart.\n\n");
		out.append(summary).append("\n").append(details);
		return out.toString();
	}

	/**
	 * Prints one part of a thread's entries and returns its summary cells: classes, classes
	 * counting nested ones apart, entries, package changes, calls back.
	 */
	static String section(StringBuilder out, String title, List<Call> section, List<Call> calls) {
		Map<String, List<Call>> classes = distinct(section);
		Map<String, Integer> raw = new LinkedHashMap<>();
		for (Call call : section) {
			raw.merge(call.type(), 1, Integer::sum);
		}
		out.append("**").append(Character.toUpperCase(title.charAt(0))).append(title.substring(1)).append("**: ").append(classes.size()).append(" classes (")
			.append(raw.size()).append(" counting nested, anonymous and lambda classes apart), ")
			.append(section.size()).append(" method entries\n\n");
		out.append("| # | package | class | entries | methods, in order of first entry | nested classes entered |\n");
		out.append("|---:|---|---|---:|---|---|\n");
		int n = 0;
		for (Map.Entry<String, List<Call>> entry : classes.entrySet()) {
			List<String> methods = new ArrayList<>();
			Map<String, Integer> nested = new TreeMap<>();
			for (Call call : entry.getValue()) {
				String method = call.type().equals(entry.getKey()) ? call.method()
						: call.type().substring(entry.getKey().length()) + "." + call.method();
				method = lambda(method);
				if (!methods.contains(method)) {
					methods.add(method);
				}
				if (!call.type().equals(entry.getKey())) {
					nested.merge(lambda(call.type().substring(entry.getKey().length())), 1, Integer::sum);
				}
			}
			String type = entry.getKey();
			out.append("| ").append(++n).append(" | ").append(packageOf(type)).append(" | ")
				.append(type.substring(type.lastIndexOf('.') + 1)).append(" | ").append(entry.getValue().size())
				.append(" | ").append(String.join(", ", methods)).append(" | ")
				.append(nested.isEmpty() ? "" : nested.toString()).append(" |\n");
		}
		Map<String, Integer> perPackage = new TreeMap<>();
		classes.keySet().forEach((type) -> perPackage.merge(packageOf(type), 1, Integer::sum));
		out.append("\nClasses per package: ").append(perPackage).append("\n");
		// The packages in the order the entries reached them, repeats in a row folded.
		List<String> sequence = new ArrayList<>();
		for (Call call : section) {
			String pkg = packageOf(call.type());
			if (sequence.isEmpty() || !sequence.get(sequence.size() - 1).equals(pkg)) {
				sequence.add(pkg);
			}
		}
		out.append("\nPackages in the order of the entries (").append(sequence.size() - 1).append(" changes): ")
			.append(String.join(" -> ", sequence)).append("\n\n");
		// Calls from one package into another, by the nearest traced caller; and calls back into a
		// package that is already on the stack beneath another one (the call went back).
		Map<String, Integer> edges = new TreeMap<>();
		Map<String, Integer> back = new LinkedHashMap<>();
		for (Call call : section) {
			String to = packageOf(call.type());
			if (call.caller() < 0) {
				continue;
			}
			Call caller = calls.get(call.caller());
			String from = packageOf(caller.type());
			if (!from.equals(to) && isStarter(caller.type())) {
				edges.merge(from + " -> " + to, 1, Integer::sum);
				List<String> stack = call.stackPackages();
				int first = stack.indexOf(to);
				if (first >= 0) {
					back.merge(shortName(caller.type()) + "." + caller.method() + " -> " + shortName(call.type()) + "."
							+ call.method() + " (" + String.join(" > ", fold(stack)) + " > " + to + ")", 1,
							Integer::sum);
				}
			}
		}
		out.append("Calls from one package into another (caller's package -> callee's, by the nearest traced caller): ")
			.append(edges.isEmpty() ? "none" : edges.toString()).append("\n\n");
		out.append("Calls back into a package already on the stack beneath another (against one direction): ")
			.append(back.isEmpty() ? "none" : "")
			.append("\n\n");
		back.forEach((edge, count) -> out.append("- ").append(edge).append(": ").append(count).append("\n"));
		if (!back.isEmpty()) {
			out.append("\n");
		}
		return classes.size() + " | " + raw.size() + " | " + section.size() + " | " + (sequence.size() - 1) + " | "
				+ back.values().stream().mapToInt(Integer::intValue).sum();
	}

	static String idle(List<Call> calls) {
		return calls.stream().filter((call) -> background.contains(backgroundKey(call))).count() + " of " + calls.size();
	}

	static List<String> fold(List<String> packages) {
		List<String> folded = new ArrayList<>();
		for (String pkg : packages) {
			if (folded.isEmpty() || !folded.get(folded.size() - 1).equals(pkg)) {
				folded.add(pkg);
			}
		}
		return folded;
	}

	/** Entries by top-level class, in the order of each class's first entry. */
	static Map<String, List<Call>> distinct(List<Call> calls) {
		Map<String, List<Call>> classes = new LinkedHashMap<>();
		for (Call call : calls) {
			classes.computeIfAbsent(topLevel(call.type()), (type) -> new ArrayList<>()).add(call);
		}
		return classes;
	}

}
