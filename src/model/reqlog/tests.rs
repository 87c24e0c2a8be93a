//! The record's encodings: exact JSON and CSV text, the binary form read back, and
//! docs/request-log.md listing exactly the fields.

use super::*;

fn sample() -> Record {
    Record {
        id: 7,
        conn: 3,
        stream: Some(5),
        server: 1,
        what: None,
        uri: "/a,\"b\"".into(),
        scheduled_us: Some(1000),
        connect_us: Some(1001),
        connected_us: Some(1100),
        send_us: Some(1100),
        written_us: Some(1101),
        first_byte_us: None,
        end_us: 5000,
        status: None,
        bytes_out: 80,
        bytes_in: 0,
        content_bytes: 0,
        end: End::Failed(ErrorKind::ConnReset),
    }
}

fn text(f: Format, r: &Record) -> String {
    let mut out = f.header();
    f.write(r, &mut out);
    String::from_utf8(out).expect("text")
}

#[test]
fn json_and_csv_write_every_field_in_order() {
    let r = sample();
    assert_eq!(
        text(Format::Jsonl, &r),
        "{\"id\":7,\"conn\":3,\"stream\":5,\"server\":1,\"uri\":\"/a,\\\"b\\\"\",\
         \"scheduled_us\":1000,\"connect_us\":1001,\"connected_us\":1100,\"send_us\":1100,\
         \"written_us\":1101,\"first_byte_us\":null,\"end_us\":5000,\"status\":null,\
         \"bytes_out\":80,\"bytes_in\":0,\"content_bytes\":0,\"error\":\"connreset\"}\n"
    );
    assert_eq!(
        text(Format::Csv, &r),
        "id,conn,stream,server,uri,scheduled_us,connect_us,connected_us,send_us,written_us,\
         first_byte_us,end_us,status,bytes_out,bytes_in,content_bytes,error\n\
         7,3,5,1,\"/a,\"\"b\"\"\",1000,1001,1100,1100,1101,,5000,,80,0,0,connreset\n"
    );
}

#[test]
fn json_lines_and_the_binary_form_read_back_the_same_records() {
    let mut ok = sample();
    ok.end = End::Reply;
    ok.status = Some(200);
    ok.first_byte_us = Some(u64::MAX - 1);
    ok.stream = None;
    let mut all = vec![sample(), ok];
    for end in [End::Closed, End::Abandoned, End::Unsent] {
        let mut r = sample();
        r.end = end;
        r.uri = String::new();
        all.push(r);
    }
    let mut bin = Format::Binary.header();
    for r in &all {
        Format::Binary.write(r, &mut bin);
        let mut line = Vec::new();
        Format::Jsonl.write(r, &mut line);
        let line = String::from_utf8(line).expect("utf-8");
        assert_eq!(&from_json_line(line.trim_end()).expect("parses"), r);
    }
    let mut input = io::Cursor::new(&bin);
    read_binary_header(&mut input).expect("header");
    let mut reader = BinaryReader::new(input);
    let mut back = Vec::new();
    while let Some(r) = reader.next_record().expect("record") {
        back.push(r);
    }
    assert_eq!(back, all);
    // Cut short inside a record: an error, not a record.
    let mut input = io::Cursor::new(&bin[..bin.len() - 3]);
    read_binary_header(&mut input).expect("header");
    let mut reader = BinaryReader::new(input);
    let mut got = 0;
    let e = loop {
        match reader.next_record() {
            Ok(Some(_)) => got += 1,
            Ok(None) => panic!("the cut record was read"),
            Err(e) => break e,
        }
    };
    assert_eq!(got, all.len() - 1);
    assert_eq!(e.to_string(), "the log ends inside a record");
    assert!(read_binary_header(&mut io::Cursor::new(b"{\"id\":1}\n")).is_err());
}

#[test]
fn bad_json_lines_say_what_is_wrong() {
    assert_eq!(
        from_json_line("{\"id\":1}").expect_err("short"),
        "no member conn"
    );
    let mut line = Vec::new();
    Format::Jsonl.write(&sample(), &mut line);
    let line = String::from_utf8(line).expect("utf-8");
    let wrong = line.replace("\"connreset\"", "\"gone\"");
    assert_eq!(
        from_json_line(wrong.trim_end()).expect_err("bad error"),
        "error is not one of its values: \"gone\""
    );
    let wrong = line.replace("\"conn\":3", "\"conn\":-3");
    assert_eq!(
        from_json_line(wrong.trim_end()).expect_err("negative"),
        "conn is not a count: -3"
    );
}

#[test]
fn formats_follow_the_file_name() {
    assert_eq!(Format::of_path("r.csv"), Format::Csv);
    assert_eq!(Format::of_path("r.bin"), Format::Binary);
    assert_eq!(Format::of_path("r.jsonl"), Format::Jsonl);
    assert_eq!(Format::of_path("-"), Format::Jsonl);
}

#[test]
fn the_docs_list_every_field_with_its_unit() {
    let doc = include_str!("../../../docs/request-log.md");
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("Fields\n"))
        .expect("a Fields section");
    let rows: Vec<&str> = section.lines().filter(|l| l.starts_with("| `")).collect();
    let want: Vec<String> = FIELDS
        .iter()
        .map(|f| format!("| `{}` | {} | {} |", f.name, f.unit, f.about))
        .collect();
    assert_eq!(rows, want, "docs/request-log.md's Fields table");
}
