package io.github.idempotent.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.stream.Collectors;

/**
 * The golden records of record format 1, {@code src/test/resources/format-1/*.hex}: each
 * file says in its {@code #} lines what its bytes are, then holds them in hex. Written
 * once by the build that froze format 1; every later build must read them as they are
 * (docs/stores.md, "Record format 1"). Never regenerate them: a change that makes a test
 * of them fail is a change of the format.
 */
public final class GoldenRecords {

	private GoldenRecords() {
	}

	/**
	 * The bytes of {@code format-1/<name>.hex}.
	 */
	public static byte[] read(String name) {
		String path = "/format-1/" + name + ".hex";
		try (InputStream in = GoldenRecords.class.getResourceAsStream(path)) {
			if (in == null) {
				throw new IllegalStateException("No golden record " + path);
			}
			String hex = new String(in.readAllBytes(), StandardCharsets.US_ASCII).lines()
				.filter((line) -> !line.startsWith("#"))
				.map(String::strip)
				.collect(Collectors.joining());
			return HexFormat.of().parseHex(hex);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
