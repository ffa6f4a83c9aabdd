// courier-fuzz: the fuzz targets for every parser of untrusted bytes.
//
//   courier-fuzz --list
//   courier-fuzz TARGET [libFuzzer options] [CORPUS…]   built with -sanitize=fuzzer (scripts/fuzz)
//   courier-fuzz TARGET FILE…                           an ordinary build: checks each input once
//
// Each target traps when a property Courier promises does not hold, so libFuzzer keeps the
// input as a crash.
import CFuzzDriver
import Foundation

@main
enum Fuzz {
    /// The target libFuzzer's callback runs, chosen once before the driver starts.
    nonisolated(unsafe) static var selected: FuzzTarget?

    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2, arguments[1] != "--list" else {
            for target in FuzzTarget.all { print("\(target.name): \(target.summary)") }
            return
        }
        guard let target = FuzzTarget.all.first(where: { $0.name == arguments[1] }) else {
            fail("no target \(arguments[1]); --list names them")
        }
        selected = target
        if courier_fuzz_driver_available() != 0 {
            exit(runDriver())
        }
        guard arguments.count > 2 else { fail("an ordinary build checks inputs: name files or folders") }
        for path in arguments.dropFirst(2) { replay(path, with: target) }
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("courier-fuzz: \(message)\n".utf8))
        exit(2)
    }

    /// Hands libFuzzer the arguments after the target's name.
    private static func runDriver() -> Int32 {
        let argv = CommandLine.unsafeArgv
        let forwarded = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: Int(CommandLine.argc))
        forwarded[0] = argv[0]
        for index in 2..<Int(CommandLine.argc) { forwarded[index - 1] = argv[index] }
        forwarded[Int(CommandLine.argc) - 1] = nil
        var count = CommandLine.argc - 1
        var vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = forwarded
        return courier_fuzz_driver_run(&count, &vector) { data, size in
            Fuzz.selected?.check(UnsafeRawBufferPointer(start: data, count: size))
            return 0
        }
    }

    /// Checks a file, or every file of a folder (not its subfolders), once.
    private static func replay(_ path: String, with target: FuzzTarget) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            fail("no file \(path)")
        }
        let names = isFolder.boolValue ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []) : [""]
        var checked = 0
        for name in names.sorted() {
            let file = name.isEmpty ? path : path + "/" + name
            var isSubfolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: file, isDirectory: &isSubfolder), !isSubfolder.boolValue,
                let data = FileManager.default.contents(atPath: file)
            else { continue }
            data.withUnsafeBytes { target.check($0) }
            checked += 1
        }
        print("\(target.name): \(checked) inputs from \(path) hold")
    }
}
