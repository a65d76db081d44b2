package io.github.idempotent.demo;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.util.FileSystemUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The checkout page in a real headless Chromium: with "lose the response" on, one click
 * on Pay sends the payment twice with one key; the balance drops once and the second
 * answer is the replay. Skipped only off CI when Debian's chromium is not installed
 * ({@code .ci/run} installs it).
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "idempotent.ttl=10m")
class CheckoutPageBrowserTests {

	private static final Path CHROMIUM = Path.of("/usr/bin/chromium");

	private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

	private static WebDriver browser;

	private static Path profile;

	@LocalServerPort
	int port;

	@BeforeAll
	static void startBrowser() throws IOException {
		if (!chromiumInstalled() && !"true".equalsIgnoreCase(System.getenv("CI"))) {
			// Each test then reports itself as skipped, with the reason: an abort here
			// would make the class report no test at all.
			return;
		}
		profile = Files.createTempDirectory("checkout-chromium");
		ChromeOptions options = new ChromeOptions();
		// Both paths explicit, so Selenium Manager never tries to download a browser.
		options.setBinary(CHROMIUM.toFile());
		options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
				"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
				"--window-size=1200,1000", "--user-data-dir=" + profile);
		ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile())
			.usingAnyFreePort()
			.build();
		browser = new ChromeDriver(service, options);
	}

	@AfterAll
	static void stopBrowser() throws IOException {
		if (browser != null) {
			browser.quit();
		}
		if (profile != null) {
			FileSystemUtils.deleteRecursively(profile);
		}
	}

	private static boolean chromiumInstalled() {
		return Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER);
	}

	@Test
	void payWithLostResponseDebitsOnceAndShowsTheReplay() throws IOException {
		Assumptions.assumeTrue(browser != null,
				"no headless Chromium: /usr/bin/chromium or /usr/bin/chromedriver is missing. Install Debian's "
						+ "packages with 'apt-get install -y chromium chromium-driver' (.ci/run does so on CI)");
		DemoHttp http = new DemoHttp(this.port);
		long account = http.openAccount(5_000);
		browser.get(http.base() + "/");
		WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(20));
		WebElement accountId = browser.findElement(By.id("account-id"));
		accountId.clear();
		accountId.sendKeys(Long.toString(account));
		browser.findElement(By.id("refresh")).click();
		wait.until(ExpectedConditions.textToBe(By.id("balance"), "5000"));

		browser.findElement(By.id("new-order")).click();
		wait.until(ExpectedConditions.textToBe(By.id("order-status"), "CREATED"));
		String orderNo = browser.findElement(By.id("order-no")).getText();
		assertThat(browser.findElement(By.id("lose")).isSelected()).isTrue();

		browser.findElement(By.id("pay")).click();
		wait.until(ExpectedConditions.textToBe(By.id("order-status"), "PAID"));
		wait.until(ExpectedConditions.textToBe(By.id("balance"), "4750"));

		List<WebElement> payments = browser.findElements(By.cssSelector("#log tr[data-key]:not([data-key=''])"));
		assertThat(payments).hasSize(2);
		WebElement lost = payments.get(0);
		WebElement kept = payments.get(1);
		assertThat(lost.getAttribute("class")).isEqualTo("lost");
		assertThat(lost.getAttribute("data-status")).isEqualTo("201");
		assertThat(lost.getAttribute("data-replayed")).isEmpty();
		assertThat(kept.getAttribute("data-status")).isEqualTo("201");
		assertThat(kept.getAttribute("data-replayed")).isEqualTo("true");
		assertThat(kept.getAttribute("data-key")).isEqualTo(lost.getAttribute("data-key"));
		assertThat(kept.getText()).contains("pay_");

		// "Deliver the event twice" is on by default: one shipment all the same.
		assertThat(browser.findElement(By.id("deliver-twice")).isSelected()).isTrue();
		wait.until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("#shipments tr[data-shipments='1']")));
		assertThat(browser.findElements(By.cssSelector("#shipments tr"))).hasSize(1);

		assertThat(http.balance(account)).isEqualTo(4_750);
		assertThat(http.get("/api/accounts/" + account + "/ledger").expect(200).json().size()).isOne();
		assertThat(http.orderStatus(orderNo)).isEqualTo("PAID");
		screenshot();
	}

	/**
	 * Keeps what the browser showed, for a look after the build.
	 */
	private static void screenshot() throws IOException {
		File shot = ((ChromeDriver) browser).getScreenshotAs(OutputType.FILE);
		Path target = Path.of("target", "checkout-page.png");
		Files.createDirectories(target.getParent());
		Files.copy(shot.toPath(), target, StandardCopyOption.REPLACE_EXISTING);
	}

}
