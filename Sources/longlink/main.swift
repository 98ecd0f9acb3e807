import Foundation
import LonglinkCommands

// The executable only hands argv to LonglinkCLI; every command's logic lives in LonglinkCommands.
// No top-level `await`: this code runs synchronously on the main thread, so `prepareProcess` blocks the
// lifecycle signals before any other thread exists (signalfd needs them blocked in every thread).
let arguments = Array(CommandLine.arguments.dropFirst())
LonglinkCLI.prepareProcess(arguments: arguments)
let code = LonglinkCLI.runBlocking(
    arguments: arguments,
    environment: ProcessInfo.processInfo.environment,
    io: CommandIO.standard()
)
exit(code)
