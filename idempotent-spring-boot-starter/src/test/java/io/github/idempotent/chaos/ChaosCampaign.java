package io.github.idempotent.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.http.MediaType;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.http.client.support.HttpRequestWrapper;
import org.springframework.web.client.RestClient;

import io.github.idempotent.chaos.ChaosChecker.Answer;
import io.github.idempotent.chaos.ChaosChecker.Execution;
import io.github.idempotent.chaos.ChaosChecker.Fault;
import io.github.idempotent.chaos.ChaosChecker.Kind;
import io.github.idempotent.chaos.ChaosChecker.Probe;
import io.github.idempotent.chaos.ChaosChecker.Verdict;
import io.github.idempotent.client.IdempotentRetryInterceptor;
import io.github.idempotent.testsupport.FaultProxy;

/**
 * A fault campaign in the spirit of Jepsen: N instances of {@link ChaosApp} on one store,
 * each behind its own {@link FaultProxy}; client threads send the same keys to any
 * instance and retry on 409, 503 and connection errors; a scheduler draws faults from a
 * printed seed and logs a timeline. At the end every fault is healed, the lease and the
 * longest call are waited out, each key is asked once more, the store is read directly
 * for records left in progress, and {@link ChaosChecker} gives the verdict from the
 * ledgers. The seed fixes the choices (keys, instances, faults, their lengths), not the
 * timing of two machines' threads: a replay is similar, not identical.
 */
public final class ChaosCampaign {

	private static final Pattern EXECUTION = Pattern.compile("\"execution\"\\s*:\\s*\"([^\"]+)\"");

	private static final String MAX_DURATION = "idempotent.max-duration";

	/**
	 * What to run: from system properties {@code chaos.*}, see
	 * {@link #fromSystemProperties}.
	 */
	public record Config(String store, int instances, int keys, int clients, Duration duration, long seed,
			Set<Kind> faults, Duration lease, Path reportDirectory, int waitReplicas, String web, String redisClient,
			String client, boolean partition, int loadRps, int loadMaxOutstanding, Duration loadGap,
			List<String> appProperties) {

		public static Config fromSystemProperties(String defaultStore, Duration defaultDuration,
				Set<Kind> defaultFaults) {
			String seed = System.getProperty("chaos.seed", "");
			Duration duration = Duration.ofSeconds(
					Long.parseLong(System.getProperty("chaos.duration", Long.toString(defaultDuration.toSeconds()))));
			String faults = System.getProperty("chaos.faults", "");
			Set<Kind> kinds = EnumSet.noneOf(Kind.class);
			if (faults.isBlank()) {
				kinds.addAll(defaultFaults);
			}
			else if (faults.equals("all")) {
				// A form of its own: its max-duration of three leases would cut the
				// other kinds' long calls short.
				kinds.addAll(Arrays.asList(Kind.values()));
				kinds.remove(Kind.MEMORY_PRESSURE_PAST_MAX_DURATION);
			}
			else {
				for (String kind : faults.split(",")) {
					kinds.add(Kind.valueOf(kind.trim().toUpperCase().replace('-', '_')));
				}
			}
			return new Config(System.getProperty("chaos.store", defaultStore), Integer.getInteger("chaos.instances", 2),
					Integer.getInteger("chaos.keys", (int) Math.max(20, duration.toSeconds() * 3)),
					Integer.getInteger("chaos.clients", 4), duration,
					seed.isBlank() ? new Random().nextLong() & 0xffffffffL : Long.parseLong(seed), kinds,
					Duration.ofMillis(Long.getLong("chaos.lease-ms", 2000)),
					Path.of(System.getProperty("chaos.report-dir", "target/chaos")),
					Integer.getInteger("chaos.wait-replicas", 0), System.getProperty("chaos.web", "servlet"),
					System.getProperty("chaos.redis-client", "lettuce"), System.getProperty("chaos.client", "loop"),
					Boolean.getBoolean("chaos.partition"), Integer.getInteger("chaos.load-rps", 0),
					Integer.getInteger("chaos.load-max-outstanding", 500),
					Duration.ofSeconds(Long.getLong("chaos.load-gap", 12)),
					Arrays.stream(System.getProperty("chaos.app-properties", "").split(","))
						.map(String::trim)
						.filter((property) -> !property.isEmpty())
						.toList());
		}

		/**
		 * Whether the clients are a fixed offered load ({@link HeldLoad}) instead of
		 * retry loops.
		 */
		boolean heldLoad() {
			return this.loadRps > 0;
		}

		/**
		 * What the run varies besides the store, for the report's title and file name:
		 * empty for the default (Spring MVC, Lettuce, the campaign's own retry loop).
		 */
		String variant() {
			List<String> parts = new ArrayList<>();
			if (!this.web.equals("servlet")) {
				parts.add("webflux");
			}
			if (!this.redisClient.equals("lettuce")) {
				parts.add(this.redisClient);
			}
			if (!this.client.equals("loop")) {
				parts.add(this.client);
			}
			if (this.partition) {
				parts.add("partition");
			}
			if (heldLoad()) {
				parts.add("load" + this.loadRps);
			}
			for (String property : this.appProperties) {
				// idempotent.store.jdbc.claim-reads-first=false: claim-reads-first-false
				parts.add(property.substring(property.lastIndexOf('.') + 1).replaceAll("[^A-Za-z0-9]+", "-"));
			}
			return String.join("-", parts);
		}

		String fileName() {
			return "chaos-" + this.store + (variant().isEmpty() ? "" : "-" + variant()) + "-" + this.seed;
		}

	}

	public record Result(Config config, Verdict verdict, String markdown, Path report) {
	}

	private final Config config;

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	private final List<Fault> faults = new CopyOnWriteArrayList<>();

	/** The faults as the held load saw them, in order. */
	private final List<HeldLoad.Disruption> disruptions = new CopyOnWriteArrayList<>();

	// Not copy-on-write: a held load adds tens of thousands; read only after the clients
	// end.
	private final List<Answer> answers = Collections.synchronizedList(new ArrayList<>());

	private final Set<String> inFlight = ConcurrentHashMap.newKeySet();

	private final Set<String> asked = ConcurrentHashMap.newKeySet();

	private final Map<String, AtomicInteger> statuses = new ConcurrentHashMap<>();

	private final AtomicInteger gaveUp = new AtomicInteger();

	/**
	 * Answers per second since the clients started, by class (200, 409, 5xx, other, no
	 * answer): the timeline picture's data, see {@link #writeTimeline}.
	 */
	private final Map<Long, AtomicIntegerArray> perSecond = new ConcurrentHashMap<>();

	private final List<String> timeline = Collections.synchronizedList(new ArrayList<>());

	private final long origin = System.currentTimeMillis();

	private volatile long started;

	private ChaosStore store;

	private final List<ChaosInstance> instances = new ArrayList<>();

	private final List<Thread> restarts = new CopyOnWriteArrayList<>();

	public ChaosCampaign(Config config) {
		this.config = config;
	}

	public Result run() throws Exception {
		log("chaos campaign: store=" + this.config.store() + " instances=" + this.config.instances() + " keys="
				+ this.config.keys() + " clients=" + this.config.clients() + " duration=" + this.config.duration()
				+ " lease=" + this.config.lease() + " faults=" + this.config.faults() + " web=" + this.config.web()
				+ " redis-client=" + this.config.redisClient() + " client=" + this.config.client() + " partition="
				+ this.config.partition() + " seed=" + this.config.seed() + " (replay with -Dchaos.seed="
				+ this.config.seed() + ")");
		Path directory = Files.createTempDirectory("idempotent-chaos-run-");
		this.store = ChaosStore.start(this.config.store(), this.config.seed(), this.config.waitReplicas(),
				this.config.partition());
		try {
			for (int i = 0; i < this.config.instances(); i++) {
				FaultProxy proxy = FaultProxy.start("127.0.0.1", this.store.proxyTarget());
				this.store.attach(proxy);
				List<String> properties = new ArrayList<>(this.store.applicationProperties(proxy.port()));
				if (!this.config.redisClient().equals("lettuce")) {
					properties.add("spring.data.redis.client-type=" + this.config.redisClient());
				}
				// The run's own settings of the application (APP_PROPERTIES).
				properties.addAll(this.config.appProperties());
				if (this.config.faults().contains(Kind.MEMORY_PRESSURE_PAST_MAX_DURATION)
						&& properties.stream().noneMatch((property) -> property.startsWith(MAX_DURATION + "="))) {
					properties.add(MAX_DURATION + "=" + maxDuration().toMillis() + "ms");
				}
				if (this.config.heldLoad()) {
					// One call in 200 past the lease instead of one in 20: renewals are
					// still
					// exercised, and the p99 shows what the faults add, not the long
					// work.
					properties.add("chaos.long-work-one-in=200");
				}
				this.instances
					.add(new ChaosInstance(i, proxy, properties, this.config.web(), this.config.lease(), directory));
			}
			this.instances.forEach(ChaosInstance::start);
			for (ChaosInstance instance : this.instances) {
				if (!instance.awaitUp(this.http, Duration.ofSeconds(120))) {
					throw new IllegalStateException(
							"Instance " + instance.index + " did not start:\n" + instance.logTail());
				}
			}
			log("instances up on ports "
					+ this.instances.stream().map((instance) -> Integer.toString(instance.httpPort)).toList());
			return campaign(directory);
		}
		finally {
			this.instances.forEach(ChaosInstance::stop);
			this.store.close();
		}
	}

	private Result campaign(Path directory) throws Exception {
		this.started = System.currentTimeMillis();
		long end = this.started + this.config.duration().toMillis();
		List<Thread> clients = new ArrayList<>();
		HeldLoad load = null;
		if (this.config.heldLoad()) {
			// The load balancer draws from the seed too; only the load's thread uses it.
			Random balancer = new Random(this.config.seed() * 31 + 1);
			HeldLoad held = new HeldLoad(this.config.loadRps(), this.config.loadMaxOutstanding(),
					"chaos-" + this.config.seed() + "-", this.config.seed(), (key) -> callAsync(pick(balancer), key));
			Thread generator = new Thread(() -> held.run(end), "chaos-load");
			generator.setDaemon(true);
			clients.add(generator);
			generator.start();
			load = held;
		}
		else {
			for (int c = 0; c < this.config.clients(); c++) {
				Random random = new Random(this.config.seed() * 31 + c);
				Thread client = new Thread(() -> client(random, end), "chaos-client-" + c);
				client.setDaemon(true);
				clients.add(client);
				client.start();
			}
		}
		Thread scheduler = new Thread(() -> schedule(new Random(this.config.seed()), end), "chaos-faults");
		scheduler.setDaemon(true);
		scheduler.start();
		scheduler.join(this.config.duration().toMillis() + 180_000);
		for (Thread client : clients) {
			client.join(90_000);
		}
		if (load != null) {
			// Each request times out after 8 s: nothing may still be outstanding then.
			boolean drained = load.drain(30_000);
			log("load stopped, " + (drained ? "all answered" : load.outstanding() + " still outstanding"));
		}
		heal();
		// Bounds: the longest call (1.5 leases) and a lease, so that a stalled owner's
		// record has expired and every execution has ended.
		ChaosStore.sleep(this.config.lease().toMillis() * 3 + 2000);
		List<Probe> probes = probe();
		List<String> inProgress = this.store.inProgress();
		ChaosStore.sleep(500);
		List<Execution> executions = ChaosChecker
			.readLedgers(this.instances.stream().map(ChaosInstance::ledger).toList());
		Verdict verdict = new ChaosChecker(this.config.lease().toMillis(),
				this.store.waitReplicas(this.config.waitReplicas()), this.store::failoverReaches)
			.check(executions, this.faults, new ArrayList<>(this.answers), probes, inProgress);
		String markdown = report(verdict) + ((load != null) ? load.markdown(this.disruptions, this.started, end) : "");
		Files.createDirectories(this.config.reportDirectory());
		Path report = this.config.reportDirectory().resolve(this.config.fileName() + ".md");
		Files.writeString(report, markdown);
		Files.writeString(this.config.reportDirectory().resolve(this.config.fileName() + "-timeline.log"),
				String.join("\n", this.timeline) + "\n");
		// Named as the report, variant included, so that run-chaos.sh's SVG= finds them.
		writeTimeline(this.config.reportDirectory().resolve(this.config.fileName()));
		if (load != null) {
			load.writeSamples(this.config.reportDirectory().resolve(this.config.fileName() + "-load.csv"));
		}
		log("report: " + report.toAbsolutePath() + " (ledgers and instance logs in " + directory + ")");
		System.out.println(markdown);
		return new Result(this.config, verdict, markdown, report);
	}

	private void client(Random random, long end) {
		RetryingClient retrying = this.config.client().equals("interceptor") ? new RetryingClient(random) : null;
		while (System.currentTimeMillis() < end) {
			// A window of keys that moves on: each key is asked by several clients at
			// once
			// for a few seconds (a storm of retries), then new ones come.
			long base = (System.currentTimeMillis() - this.started) * this.config.keys()
					/ Math.max(1, this.config.duration().toMillis());
			String key = "chaos-" + this.config.seed() + "-" + (base + random.nextInt(8));
			this.inFlight.add(key);
			this.asked.add(key);
			try {
				if (retrying != null) {
					if (!retrying.call(key)) {
						this.gaveUp.incrementAndGet();
					}
					continue;
				}
				boolean done = false;
				long deadline = System.currentTimeMillis() + 30_000;
				for (int attempt = 0; attempt < 200 && !done && System.currentTimeMillis() < deadline; attempt++) {
					ChaosInstance instance = pick(random);
					done = call(instance, key, true) == 200;
					if (!done) {
						ChaosStore.sleep(100 + random.nextInt(300));
					}
				}
				if (!done) {
					this.gaveUp.incrementAndGet();
				}
			}
			finally {
				this.inFlight.remove(key);
			}
			ChaosStore.sleep(random.nextInt(50));
		}
	}

	private ChaosInstance pick(Random random) {
		List<ChaosInstance> up = this.instances.stream().filter(ChaosInstance::isUp).toList();
		List<ChaosInstance> from = up.isEmpty() ? this.instances : up;
		return from.get(random.nextInt(from.size()));
	}

	/** One POST; a 200 goes to the history. @return the status, 0 for no answer */
	private int call(ChaosInstance instance, String key, boolean record) {
		try {
			return answered(instance, key, record,
					this.http.send(workRequest(instance, key), HttpResponse.BodyHandlers.ofString()));
		}
		catch (IOException ex) {
			count(0);
			return 0;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			count(0);
			return 0;
		}
	}

	/**
	 * One POST of the held load: sent without waiting, a 200 goes to the history.
	 * @return the status, 0 for no answer
	 */
	private CompletableFuture<Integer> callAsync(ChaosInstance instance, String key) {
		this.asked.add(key);
		this.inFlight.add(key);
		return this.http.sendAsync(workRequest(instance, key), HttpResponse.BodyHandlers.ofString())
			.handle((response, ex) -> {
				this.inFlight.remove(key);
				if (ex != null) {
					count(0);
					return 0;
				}
				return answered(instance, key, true, response);
			});
	}

	private HttpRequest workRequest(ChaosInstance instance, String key) {
		return HttpRequest.newBuilder(URI.create(instance.baseUrl() + "/work"))
			.timeout(Duration.ofSeconds(8))
			.header("Idempotency-Key", key)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"key\":\"" + key + "\"}"))
			.build();
	}

	private int answered(ChaosInstance instance, String key, boolean record, HttpResponse<String> response) {
		int status = response.statusCode();
		if (status == 200) {
			Matcher matcher = EXECUTION.matcher(response.body());
			String execution = matcher.find() ? matcher.group(1) : "(no execution in " + response.body() + ")";
			boolean replayed = response.headers().firstValue("Idempotent-Replayed").isPresent();
			if (record) {
				this.answers.add(new Answer(key, execution, instance.index, System.currentTimeMillis(), replayed));
			}
			this.lastExecution.put(key, execution);
		}
		else if (status == 500 && response.body().contains("its result was not stored")) {
			this.lastExecution.put(key, ChaosChecker.NOT_STORED);
		}
		count(status);
		return status;
	}

	/**
	 * Writes PREFIX-answers.csv (the client answers per second, by class) and
	 * PREFIX-faults.csv (each fault's kind, target and window), both in milliseconds or
	 * seconds since the clients started, which benchmarks/tools/plot-svg.py draws.
	 */
	private void writeTimeline(Path prefix) throws IOException {
		StringBuilder answers = new StringBuilder("second,200,409,5xx,other 4xx,no answer\n");
		new java.util.TreeMap<>(this.perSecond).forEach((second, counts) -> {
			answers.append(second);
			for (int i = 0; i < counts.length(); i++) {
				answers.append(',').append(counts.get(i));
			}
			answers.append('\n');
		});
		Files.writeString(Path.of(prefix + "-answers.csv"), answers);
		StringBuilder faults = new StringBuilder("kind,target,start_ms,end_ms,effective\n");
		for (Fault fault : this.faults) {
			String target = (fault.instance() >= 0) ? "instance " + fault.instance()
					: (fault.key() != null) ? "key" : "store";
			faults.append(fault.kind().name().toLowerCase().replace('_', ' '))
				.append(',')
				.append(target)
				.append(',')
				.append(fault.start() - this.started)
				.append(',')
				.append(fault.end() - this.started)
				.append(',')
				.append(fault.effective())
				.append('\n');
		}
		Files.writeString(Path.of(prefix + "-faults.csv"), faults);
	}

	private final Map<String, String> lastExecution = new ConcurrentHashMap<>();

	/**
	 * A client as an application's service-to-service call would be: one
	 * {@code RestClient} call per key through the starter's
	 * {@link IdempotentRetryInterceptor} (10 retries, otherwise its defaults: 100 ms
	 * doubling to 2 s, {@code Retry-After} honoured), in front of a load balancer
	 * interceptor that sends each attempt to an instance that is up. The campaign's own
	 * loop is not used: what the interceptor gives up on stays given up (until the probe
	 * at the end).
	 */
	private final class RetryingClient {

		private final Random random;

		private final RestClient restClient;

		private final ThreadLocal<ChaosInstance> answered = new ThreadLocal<>();

		RetryingClient(Random random) {
			this.random = random;
			JdkClientHttpRequestFactory factory = new JdkClientHttpRequestFactory(HttpClient.newBuilder()
				.version(HttpClient.Version.HTTP_1_1)
				.connectTimeout(Duration.ofSeconds(2))
				.build());
			factory.setReadTimeout(Duration.ofSeconds(8));
			this.restClient = RestClient.builder()
				.baseUrl("http://chaos")
				.requestFactory(factory)
				.requestInterceptor(IdempotentRetryInterceptor.builder().maxRetries(10).build())
				.requestInterceptor(this::balance)
				.build();
		}

		/**
		 * The load balancer: each attempt to an instance that is up, its status counted.
		 */
		private ClientHttpResponse balance(org.springframework.http.HttpRequest request, byte[] body,
				ClientHttpRequestExecution execution) throws IOException {
			ChaosInstance instance = pick(this.random);
			this.answered.set(instance);
			URI uri = URI.create(instance.baseUrl() + request.getURI().getRawPath());
			try {
				ClientHttpResponse response = execution.execute(new HttpRequestWrapper(request) {
					@Override
					public URI getURI() {
						return uri;
					}
				}, body);
				count(response.getStatusCode().value());
				return response;
			}
			catch (IOException | RuntimeException ex) {
				count(0);
				throw ex;
			}
		}

		/**
		 * @return whether the call ended with a 200
		 */
		boolean call(String key) {
			try {
				return this.restClient.post()
					.uri("/work")
					.header("Idempotency-Key", key)
					.contentType(MediaType.APPLICATION_JSON)
					.body("{\"key\":\"" + key + "\"}")
					.exchange((request, response) -> {
						if (response.getStatusCode().value() != 200) {
							return false;
						}
						String text = new String(response.getBody().readAllBytes(), StandardCharsets.UTF_8);
						Matcher matcher = EXECUTION.matcher(text);
						String execution = matcher.find() ? matcher.group(1) : "(no execution in " + text + ")";
						boolean replayed = response.getHeaders().getFirst("Idempotent-Replayed") != null;
						ChaosCampaign.this.answers.add(new Answer(key, execution, this.answered.get().index,
								System.currentTimeMillis(), replayed));
						return true;
					});
			}
			catch (RuntimeException ex) {
				// The last I/O error once the retries ran out.
				return false;
			}
		}

	}

	private void count(int status) {
		this.statuses.computeIfAbsent(Integer.toString(status), (s) -> new AtomicInteger()).incrementAndGet();
		int answerClass = (status == 200) ? 0 : (status == 409) ? 1 : (status >= 500) ? 2 : (status == 0) ? 4 : 3;
		this.perSecond
			.computeIfAbsent((System.currentTimeMillis() - this.started) / 1000, (second) -> new AtomicIntegerArray(5))
			.incrementAndGet(answerClass);
	}

	/** The fault kinds the scheduler draws from, those this store can take. */
	private volatile List<Kind> drawn = List.of();

	private void schedule(Random random, long end) {
		List<Kind> kinds = new ArrayList<>(this.config.faults());
		if (!this.store.hasMemoryLimit()) {
			kinds.remove(Kind.MEMORY_PRESSURE);
			kinds.remove(Kind.MEMORY_PRESSURE_PAST_MAX_DURATION);
		}
		// One kind draws the store's own crash: a restart, or a failover for Sentinel and
		// Cluster.
		kinds.remove(Kind.FAILOVER);
		kinds.remove(Kind.CLUSTER_FAILOVER);
		if (!this.store.proxyCarriesData()) {
			// The proxy would cut or hold nothing the store's calls use.
			kinds.removeAll(List.of(Kind.CUT, Kind.STALL, Kind.STALL_PAST_LEASE));
		}
		this.drawn = List.copyOf(kinds);
		if (kinds.isEmpty()) {
			return;
		}
		long lease = this.config.lease().toMillis();
		if (this.config.heldLoad()) {
			scheduleSpaced(kinds, random, end, lease);
			return;
		}
		ChaosStore.sleep(1000 + random.nextInt(1000));
		for (int round = 0; round < 10_000 && System.currentTimeMillis() < end - 2000; round++) {
			Kind kind = kinds.get(random.nextInt(kinds.size()));
			ChaosInstance instance = this.instances.get(random.nextInt(this.instances.size()));
			long length = random.nextInt(1000);
			long start = System.currentTimeMillis();
			try {
				inject(kind, instance, length, lease, random, start);
			}
			finally {
				ChaosStore.sleep(500 + random.nextInt(2000));
			}
		}
	}

	/**
	 * The held load's faults: one kind at a time in rounds of every kind (shuffled from
	 * the seed), each fault alone between quiet gaps ({@code chaos.load-gap}), so that
	 * the load before, during and after it is this fault's.
	 */
	private void scheduleSpaced(List<Kind> kinds, Random random, long end, long lease) {
		long gap = this.config.loadGap().toMillis();
		// Twice the gap first: the instances' first requests are slow (classes loaded,
		// code compiled), not a fault's before window.
		ChaosStore.sleep(2 * gap);
		List<Kind> round = new ArrayList<>();
		while (System.currentTimeMillis() < end - gap) {
			if (round.isEmpty()) {
				round.addAll(kinds);
				Collections.shuffle(round, random);
			}
			Kind kind = round.remove(0);
			ChaosInstance instance = this.instances.get(random.nextInt(this.instances.size()));
			long length = random.nextInt(1000);
			int recorded = this.faults.size();
			inject(kind, instance, length, lease, random, System.currentTimeMillis());
			if (this.faults.size() > recorded) {
				Fault fault = this.faults.get(recorded);
				// A killed instance is down until it is up again, which inject waited
				// for.
				long over = (kind == Kind.KILL) ? System.currentTimeMillis() : fault.end();
				this.disruptions.add(new HeldLoad.Disruption(fault.kind(), fault.start(), over));
			}
			ChaosStore.sleep(gap);
		}
	}

	private void inject(Kind kind, ChaosInstance instance, long length, long lease, Random random, long start) {
		switch (kind) {
			case CUT -> {
				instance.proxy.cut();
				record(kind, instance.index, null, start, true, "all store connections closed");
			}
			case STALL, STALL_PAST_LEASE -> {
				long hold = (kind == Kind.STALL) ? 200 + length * (lease - 700) / 1000 : lease + 1000 + length;
				instance.proxy.stall();
				ChaosStore.sleep(hold);
				instance.proxy.pass();
				record(kind, instance.index, null, start, true, "held " + hold + " ms");
			}
			case PAUSE, PAUSE_PAST_LEASE -> {
				if (!instance.isUp()) {
					return;
				}
				long hold = (kind == Kind.PAUSE) ? 200 + length * (lease - 700) / 1000 : lease + 1000 + length * 2;
				instance.pause();
				ChaosStore.sleep(hold);
				instance.resume();
				record(kind, instance.index, null, start, true, "SIGSTOP for " + hold + " ms");
			}
			case KILL -> {
				if (!instance.isUp()) {
					return;
				}
				instance.kill();
				record(kind, instance.index, null, start, true, "SIGKILL pid " + instance.pid());
				ChaosStore.sleep(300 + length);
				instance.start();
				boolean up = instance.awaitUp(this.http, Duration.ofSeconds(120));
				log("instance " + instance.index + (up ? " restarted" : " did NOT restart:\n" + instance.logTail()));
			}
			case FORCE_DELETE -> forceDelete(random, instance, start);
			case STORE_RESTART, FAILOVER, CLUSTER_FAILOVER -> {
				// The fault starts with the crash: what prepares it (a replica cut off)
				// is
				// before.
				String before = this.store.beforeRestart();
				long crash = System.currentTimeMillis();
				String done = this.store.restart();
				if (done == null) {
					return;
				}
				record(this.store.restartKind(), -1, null, crash, true, (before != null) ? before + ", " + done : done);
				String after = this.store.afterRestart();
				if (after != null) {
					log(after);
				}
			}
			case MEMORY_PRESSURE -> {
				long hold = 1000 + length * 3;
				this.store.memoryPressure(true, false);
				ChaosStore.sleep(hold);
				this.store.memoryPressure(false, false);
				record(kind, -1, null, start, true, "maxmemory just above used memory for " + hold + " ms");
			}
			case MEMORY_PRESSURE_PAST_MAX_DURATION -> {
				// Every write refused for longer than a call may hold its key: the calls
				// in progress keep their keys with a record that their result was not
				// stored, and none runs again.
				long hold = maxDuration().toMillis() + lease + 1000 + length;
				this.store.memoryPressure(true, true);
				ChaosStore.sleep(hold);
				this.store.memoryPressure(false, false);
				record(kind, -1, null, start, true,
						"maxmemory 1 for " + hold + " ms (max-duration " + maxDuration().toMillis() + " ms)");
			}
		}
	}

	/**
	 * How long a call may hold its key on the instances: {@code idempotent.max-duration}
	 * of the run's settings (APP_PROPERTIES), else three leases when memory is to stay
	 * full past it (a run that does not draw that fault keeps the starter's default).
	 */
	private Duration maxDuration() {
		return this.config.appProperties()
			.stream()
			.filter((property) -> property.startsWith(MAX_DURATION + "="))
			.map((property) -> DurationStyle.detectAndParse(property.substring(MAX_DURATION.length() + 1)))
			.findFirst()
			.orElse(this.config.lease().multipliedBy(3));
	}

	private void forceDelete(Random random, ChaosInstance via, long start) {
		List<String> keys = new ArrayList<>(this.inFlight);
		Collections.sort(keys);
		if (keys.isEmpty() || !via.isUp()) {
			return;
		}
		String key = keys.get(random.nextInt(keys.size()));
		try {
			HttpResponse<String> response = this.http.send(HttpRequest
				.newBuilder(URI.create(via.baseUrl() + "/actuator/idempotency/chaos/" + key + "?force=true"))
				.timeout(Duration.ofSeconds(8))
				.DELETE()
				.build(), HttpResponse.BodyHandlers.ofString());
			boolean deleted = response.body().contains("\"deleted\":true");
			record(Kind.FORCE_DELETE, -1, key, start, deleted,
					"through instance " + via.index + ": " + response.statusCode() + " " + response.body());
		}
		catch (IOException ex) {
			record(Kind.FORCE_DELETE, -1, key, start, false, "through instance " + via.index + ": " + ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void record(Kind kind, int instance, String key, long start, boolean effective, String detail) {
		long end = System.currentTimeMillis();
		this.faults.add(new Fault(kind, instance, key, start, end, effective, detail));
		log(kind + " " + ((instance >= 0) ? "instance " + instance : (key != null) ? key : "store") + " ["
				+ (start - this.origin) + " ms, " + (end - this.origin) + " ms] " + detail);
	}

	private void heal() throws InterruptedException {
		for (Thread restart : this.restarts) {
			restart.join(130_000);
		}
		for (ChaosInstance instance : this.instances) {
			instance.proxy.pass();
			if (instance.isUp()) {
				instance.resume();
			}
			else {
				instance.start();
				instance.awaitUp(this.http, Duration.ofSeconds(120));
			}
		}
		if (this.store.hasMemoryLimit()) {
			this.store.memoryPressure(false, false);
		}
		log("healed");
	}

	private List<Probe> probe() throws InterruptedException {
		List<String> keys = new ArrayList<>(this.asked);
		Collections.sort(keys);
		Random random = new Random(this.config.seed());
		List<Callable<Probe>> questions = new ArrayList<>();
		for (String key : keys) {
			ChaosInstance instance = this.instances.get(random.nextInt(this.instances.size()));
			questions.add(() -> {
				long time = System.currentTimeMillis();
				this.lastExecution.remove(key);
				int status = call(instance, key, true);
				return new Probe(key, status, this.lastExecution.get(key), time);
			});
		}
		// A held load asks tens of thousands of keys: four at a time (distinct keys, so
		// the answers are the same as one at a time).
		ExecutorService asking = Executors.newFixedThreadPool(this.config.heldLoad() ? 4 : 1);
		List<Probe> probes = new ArrayList<>();
		try {
			for (Future<Probe> probe : asking.invokeAll(questions)) {
				probes.add(probe.get());
			}
		}
		catch (ExecutionException ex) {
			throw new IllegalStateException(ex.getCause());
		}
		finally {
			asking.shutdownNow();
		}
		log("probed " + probes.size() + " keys");
		return probes;
	}

	private String report(Verdict verdict) {
		StringBuilder md = new StringBuilder();
		md.append("### ")
			.append(this.store.name().replaceAll(" \\d+", ""))
			.append(variantTitle())
			.append(": ")
			.append(this.config.duration().toSeconds())
			.append(" s, seed ")
			.append(this.config.seed())
			.append(", ")
			.append(Instant.ofEpochMilli(this.origin))
			.append("\n\n");
		md.append(this.config.instances())
			.append(" instances, ")
			.append(this.config.heldLoad()
					? "a held load of " + this.config.loadRps()
							+ " requests/s (no retries: later requests and the last question ask each key again), "
							+ "faults one at a time " + this.config.loadGap().toSeconds() + " s apart"
					: this.config.clients() + " clients")
			.append(", lease ")
			.append(this.config.lease().toMillis())
			.append(" ms, fault kinds: ")
			.append(this.drawn.stream().map((kind) -> kind.name().toLowerCase()).toList())
			.append(".\n\n");
		md.append("| fault | injected |\n|---|---|\n");
		for (Kind kind : Kind.values()) {
			if (verdict.faults().containsKey(kind)) {
				long effective = this.faults.stream().filter((f) -> f.kind() == kind && f.effective()).count();
				md.append("| ")
					.append(kind.title)
					.append(" | ")
					.append(verdict.faults().get(kind))
					.append((effective != verdict.faults().get(kind)) ? " (" + effective + " took effect)" : "")
					.append(" |\n");
			}
		}
		md.append(
				"\n| keys | executions | excused re-runs | violations | client answers by status |\n|---|---|---|---|---|\n");
		int excused = verdict.excused().values().stream().mapToInt(Integer::intValue).sum();
		md.append("| ")
			.append(verdict.keys())
			.append(" | ")
			.append(verdict.executions())
			.append(" | ")
			.append(excused)
			.append(verdict.excused().isEmpty() ? "" : " " + verdict.excused().toString().replace('=', ':'))
			.append(" | ")
			.append(verdict.violations().size())
			.append(" | ")
			.append(statusSummary())
			.append(" |\n\n");
		if (verdict.faults().containsKey(Kind.FAILOVER) || verdict.faults().containsKey(Kind.CLUSTER_FAILOVER)) {
			md.append("Failover loss window (")
				.append(this.store.lossSetting(this.config.waitReplicas()))
				.append("): ")
				.append((verdict.failoverLossMillis() < 0) ? "no write lost"
						: "the latest lost write ended " + verdict.failoverLossMillis()
								+ " ms before the primary was killed")
				.append(".\n\n");
		}
		if (this.gaveUp.get() > 0) {
			md.append(this.gaveUp.get()).append(" client calls gave up after 30 s of retries.\n\n");
		}
		if (!verdict.violations().isEmpty()) {
			md.append("Violations (times in epoch ms):\n\n");
			verdict.violations()
				.stream()
				.limit(30)
				.forEach((violation) -> md.append("- ").append(violation).append('\n'));
			if (verdict.violations().size() > 30) {
				md.append("- ... and ").append(verdict.violations().size() - 30).append(" more\n");
			}
			md.append('\n');
		}
		return md.toString();
	}

	private String variantTitle() {
		List<String> parts = new ArrayList<>();
		if (this.config.web().equals("reactive")) {
			parts.add("WebFlux instances (`Mono` handlers)");
		}
		if (!this.config.redisClient().equals("lettuce")) {
			parts.add(this.config.redisClient() + " client");
		}
		if (this.config.client().equals("interceptor")) {
			parts.add("clients retrying through `IdempotentRetryInterceptor`");
		}
		if (this.config.partition()) {
			parts.add("proxy faults between each instance and one node");
		}
		if (this.config.heldLoad()) {
			parts.add("held load of " + this.config.loadRps() + " requests/s");
		}
		this.config.appProperties().forEach((property) -> parts.add("`" + property + "`"));
		return parts.isEmpty() ? "" : ", " + String.join(", ", parts);
	}

	private String statusSummary() {
		List<String> parts = new ArrayList<>();
		new java.util.TreeMap<>(this.statuses)
			.forEach((status, count) -> parts.add((status.equals("0") ? "no answer" : status) + ": " + count.get()));
		return String.join(", ", parts);
	}

	private void log(String line) {
		String stamped = "[chaos +" + (System.currentTimeMillis() - this.origin) + " ms] " + line;
		this.timeline.add(stamped);
		System.out.println(stamped);
	}

}
