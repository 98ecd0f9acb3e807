import Foundation
import LonglinkCommands

// The executable only hands argv to LonglinkCLI; every command's logic lives in LonglinkCommands.
let code = await LonglinkCLI.main(
    arguments: Array(CommandLine.arguments.dropFirst()),
    environment: ProcessInfo.processInfo.environment,
    io: CommandIO.standard()
)
exit(code)
