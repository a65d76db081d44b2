package io.github.idempotent.store.jdbc;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcOperations;

/**
 * A row of a {@link JdbcIdempotencyStore}'s table as {@link JdbcStatements#select} reads
 * it: for a claim, for a completion sent again, and for an inspection.
 */
record RecordRow(boolean completed, boolean tombstone, String token, String fingerprint, byte[] result, long millisLeft,
		boolean expired) {

	static @Nullable RecordRow select(JdbcOperations jdbc, JdbcStatements sql, String key) {
		List<RecordRow> rows = jdbc.query(sql.select,
				(rs, rowNum) -> new RecordRow("C".equals(rs.getString(1)), "D".equals(rs.getString(1)), rs.getString(2),
						rs.getString(3), rs.getBytes(4), rs.getLong(5), rs.getInt(6) == 1),
				key);
		return rows.isEmpty() ? null : rows.get(0);
	}

	@Override
	public byte[] result() {
		return (this.result != null) ? this.result : new byte[0];
	}

}
