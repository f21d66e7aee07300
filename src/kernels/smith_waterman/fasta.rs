//! A small FASTA reader: `>` header lines, sequences over several lines.

use super::InputError;

/// One FASTA record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FastaRecord {
    /// The header line after `>`, trimmed.
    pub name: String,
    /// The residues, upper-cased, with line breaks and blanks removed.
    pub sequence: Vec<u8>,
}

/// Parses FASTA text: each record is a `>` header line followed by any
/// number of sequence lines. Letters are upper-cased; spaces, tabs and `\r`
/// are ignored, as are empty lines and `;` comment lines. A sequence
/// character other than a letter or `*` (say `-` or a digit) is an
/// [`InputError::FastaCharacter`], sequence data before the first header an
/// [`InputError::FastaMissingHeader`]. Text without a record gives an empty list.
pub fn parse_fasta(text: &str) -> Result<Vec<FastaRecord>, InputError> {
    let mut records: Vec<FastaRecord> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line_number = index + 1;
        let line = line.trim_end_matches('\r');
        if let Some(header) = line.strip_prefix('>') {
            records.push(FastaRecord { name: header.trim().to_owned(), sequence: Vec::new() });
            continue;
        }
        if line.starts_with(';') || line.trim().is_empty() {
            continue;
        }
        let Some(record) = records.last_mut() else {
            return Err(InputError::FastaMissingHeader { line: line_number });
        };
        for c in line.chars().filter(|c| !matches!(c, ' ' | '\t')) {
            if !(c.is_ascii_alphabetic() || c == '*') {
                return Err(InputError::FastaCharacter { line: line_number, character: c });
            }
            record.sequence.push(c.to_ascii_uppercase() as u8);
        }
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_span_lines_and_letters_are_upper_cased() {
        let text = "; old-style comment\r\n>first one \r\nacgT\r\nNN\n\n>second\n>third\nMK V*\n";
        let records = parse_fasta(text).unwrap();
        let names: Vec<&str> = records.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["first one", "second", "third"]);
        assert_eq!(records[0].sequence, b"ACGTNN");
        assert!(records[1].sequence.is_empty());
        assert_eq!(records[2].sequence, b"MKV*");
        assert_eq!(parse_fasta("").unwrap(), []);
    }

    #[test]
    fn stray_characters_and_headerless_data_are_errors_with_line_numbers() {
        assert_eq!(parse_fasta("\nACGT\n"), Err(InputError::FastaMissingHeader { line: 2 }));
        assert_eq!(parse_fasta(">x\nAC-GT\n"), Err(InputError::FastaCharacter { line: 2, character: '-' }));
    }
}
