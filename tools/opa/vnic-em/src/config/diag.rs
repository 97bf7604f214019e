// SPDX-License-Identifier: GPL-2.0

//! The errors of a config file and where they are, printed as compilers print theirs.

use std::fmt;

/// One error in a config file, at a line and column (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diag {
    /// Line (1-based; 0 when the error is not about a place).
    pub line: usize,
    /// Column (1-based).
    pub col: usize,
    /// The message.
    pub msg: String,
}

/// Every error of a config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigErrors {
    /// The file, as named on the command line.
    pub path: String,
    /// The errors, in file order.
    pub diags: Vec<Diag>,
}

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diags.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}", d.text(&self.path, "error"))?;
        }
        Ok(())
    }
}

impl Diag {
    /// `FILE:LINE:COL: KIND: message`, as compilers print them (no line
    /// and column when the diagnostic is not about a place).
    pub fn text(&self, path: &str, kind: &str) -> String {
        if self.line == 0 {
            format!("{path}: {kind}: {}", self.msg)
        } else {
            format!("{path}:{}:{}: {kind}: {}", self.line, self.col, self.msg)
        }
    }
}

impl std::error::Error for ConfigErrors {}

/// 1-based line and column of byte `offset` in `src`.
pub fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(src.len());
    let before = src.get(..offset).unwrap_or(src);
    let line = before.matches('\n').count() + 1;
    let col = match before.rfind('\n') {
        Some(nl) => before.get(nl + 1..).map_or(1, |s| s.chars().count() + 1),
        None => before.chars().count() + 1,
    };
    (line, col)
}
