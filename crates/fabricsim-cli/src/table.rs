//! Left-aligned text columns for the listing commands (`profiles`, `catalog`).

/// Rows as lines, each column padded to its widest cell (in chars), two spaces apart.
pub fn aligned<const N: usize>(rows: &[[String; N]]) -> String {
    let mut width = [0usize; N];
    for row in rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 < N {
                line.push_str(&format!("{cell:<w$}  ", w = width[i]));
            } else {
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_line_up_on_the_widest_cell() {
        let rows = [
            ["id".to_string(), "name".to_string()],
            ["ib-ndr".to_string(), "x".to_string()],
        ];
        assert_eq!(super::aligned(&rows), "id      name\nib-ndr  x\n");
    }
}
