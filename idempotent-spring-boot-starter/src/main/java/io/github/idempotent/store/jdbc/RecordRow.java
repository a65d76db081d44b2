package io.github.idempotent.store.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcOperations;
import org.springframework.util.StringUtils;

import io.github.idempotent.store.Fingerprint;

/** A row of the store's table as {@link JdbcStatements#select} reads it. */
record RecordRow(boolean completed, boolean tombstone, String token, String fingerprint, byte[] result, long millisLeft,
		boolean expired) {

	static @Nullable RecordRow select(JdbcOperations jdbc, JdbcStatements sql, String key) {
		List<RecordRow> rows = jdbc.query(sql.select, (rs, rowNum) -> read(rs, 1), key);
		return rows.isEmpty() ? null : rows.get(0);
	}

	static RecordRow read(ResultSet rs, int first) throws SQLException {
		String state = rs.getString(first);
		return new RecordRow("C".equals(state), "D".equals(state), rs.getString(first + 1), rs.getString(first + 2),
				rs.getBytes(first + 3), rs.getLong(first + 4), rs.getInt(first + 5) == 1);
	}

	/** {@code null} for a blank fingerprint, which this store never writes. */
	static @Nullable Fingerprint fingerprintOf(@Nullable String text) {
		return StringUtils.hasText(text) ? new Fingerprint(text) : null;
	}

	@Override
	public byte[] result() {
		return (this.result != null) ? this.result : new byte[0];
	}

}
